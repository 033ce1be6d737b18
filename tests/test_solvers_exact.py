"""Exact MIP solver: proven optima equal brute-force enumeration; agreement with PyVRP."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from instances import random_instance

from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route, instances_to_tensordict
from clrp_rl4co.solvers import solve_exact, solve_pyvrp, solve_td
from clrp_rl4co.solvers.common import make_result
from clrp_rl4co.solvers.exact_model import build_model, extract_solution, solution_values


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
    res = solve_exact(inst, seconds=20, warm_start=False)
    assert res.proven_optimal and res.status == "optimal"
    assert res.objective == pytest.approx(16.0)
    assert res.bound <= res.objective + 1e-6
    assert brute_force(inst) == pytest.approx(16.0)


@pytest.mark.parametrize("strategy", ["monolithic", "subsets"])
@pytest.mark.parametrize("num_customers,seed", [(3, 0), (4, 1), (5, 2), (5, 3)])
def test_exact_equals_brute_force(num_customers, seed, strategy):
    inst = tight_instance(num_customers, seed)
    res = solve_exact(inst, seconds=30, strategy=strategy, warm_start=seed % 2 == 0)
    assert res.proven_optimal, res.status
    res.solution.check(inst)
    assert res.objective == pytest.approx(brute_force(inst), rel=1e-9, abs=1e-9)
    assert res.objective == pytest.approx(res.solution.cost(inst).total)


@pytest.mark.parametrize("seed", [0, 3])
def test_clrp10_exact_vs_pyvrp(seed):
    inst = random_instance(10, seed)
    exact = solve_exact(inst, seconds=60, threads=2)
    heur = solve_pyvrp(inst, seconds=None, max_iterations=3000, seed=0)
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
    with pytest.raises(ValueError, match="read-only"):  # checked once: it cannot change
        inst.demand[0] = 50.0
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
    td = instances_to_tensordict([random_instance(10, 0)])
    with pytest.raises(ValueError, match="^seconds: the exact solver needs a time limit"):
        solve_td(td, seconds=None, solver="exact")


def test_no_solution_is_not_a_cost():
    inst = random_instance(10, 0)
    res = make_result(inst, None, solver="exact", runtime=0.0, bound=5.0)
    assert res.status == "no solution" and res.objective is None and not res.proven_optimal
    tiny = solve_exact(inst, seconds=0.001, warm_start=False)
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
    res = solve_exact(random_instance(10, 0), seconds=0.001, warm_start=False)
    assert res.bound is None or math.isfinite(res.bound)


def _status_case(monkeypatch, sol, bound, proven):
    import clrp_rl4co.solvers.exact as exact

    monkeypatch.setattr(exact, "_monolithic", lambda *args: (sol, bound, proven))
    return exact.solve_exact(tight_instance(4, 0), seconds=5, warm_start=False)


def test_status_follows_highs_and_the_gap(monkeypatch):
    inst = tight_instance(4, 0)
    sol = solve_pyvrp(inst, seconds=None, max_iterations=200).solution
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
    with pytest.raises(
        ValueError,
        match="^instance '': the warm-start solution is invalid: customer 2 is not served",
    ):
        solve_exact(inst, seconds=5, warm_start=bad)


def _pair_instance(second_demand: float) -> CLRPInstance:
    """Two depots, three customers; customers 0 and 1 together load ``5 + second_demand`` onto a
    vehicle of capacity 10."""
    return CLRPInstance(
        depot_locs=[[0.0, 0.0], [1.0, 1.0]],
        customer_locs=[[0.2, 0.1], [0.3, 0.2], [0.8, 0.9]],
        depot_capacity=[30.0, 30.0],
        opening_cost=[1.0, 1.0],
        demand=[5.0, second_demand, 3.0],
        vehicle_capacity=10.0,
        vehicle_fixed_cost=0.5,
        name="pair",
    )


@pytest.mark.parametrize("strategy", ["monolithic", "subsets"])
def test_warm_start_over_capacity_within_tolerance_is_dropped_with_a_warning(strategy, caplog):
    # 5 + 5.000005 exceeds q = 10 by less than the checker's capacity tolerance (1e-5): the
    # solution is valid, but the MIP has no arc between customers 0 and 1
    inst = _pair_instance(5.000005)
    warm = CLRPSolution([Route(0, (0, 1)), Route(1, (2,))])
    warm.check(inst)
    with caplog.at_level("WARNING", logger="clrp_rl4co.solvers.exact"):
        res = solve_exact(inst, seconds=10, strategy=strategy, warm_start=warm)
    (record,) = [r for r in caplog.records if r.levelname == "WARNING"]
    message = record.getMessage()
    assert message.startswith("pair: the warm start is not given to HiGHS")
    assert "from customer 0 to customer 1" in message and "above the vehicle capacity 10" in message
    assert res.solution is not None
    res.solution.check(inst)


def test_warm_start_within_capacity_gives_no_warning(caplog):
    inst = _pair_instance(5.0)
    warm = CLRPSolution([Route(0, (0, 1)), Route(1, (2,))])
    with caplog.at_level("WARNING", logger="clrp_rl4co.solvers.exact"):
        solve_exact(inst, seconds=10, strategy="monolithic", warm_start=warm)
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_time_limit_with_a_solution_is_feasible_not_optimal():
    # clrp20 with half a second: HiGHS has the warm start (a fixed PyVRP solution) but cannot
    # prove it optimal (its bound is -inf before presolve ends, 0 before the root LP, about
    # 12.8 after it; the optimum is above 13): the run must say "feasible".
    inst = random_instance(20, 0)
    warm = solve_pyvrp(inst, seconds=None, max_iterations=300, seed=0).solution
    res = solve_exact(inst, seconds=0.5, strategy="monolithic", warm_start=warm)
    assert res.solution is not None and res.objective is not None  # guard: a solution to flag
    assert res.objective <= warm.cost(inst).total + 1e-9
    assert res.bound is None or res.bound < res.objective * (1 - 1e-3)
    assert not res.proven_optimal
    assert res.status == "feasible"


def test_highs_optimal_with_an_open_gap_is_not_proven(monkeypatch):
    # HiGHS reports "Optimal" whenever its gap is within mip_rel_gap; the solver runs it with 0,
    # here 5% so that HiGHS stops with the gap open (deterministic, no time limit involved).
    import clrp_rl4co.solvers.exact as exact

    build, run, seen = exact._highs, exact._run, []

    def loose(*args, **kwargs):
        h = build(*args, **kwargs)
        h.setOptionValue("mip_rel_gap", 0.05)
        return h

    def spy(h, time_limit):
        seen.append(run(h, time_limit))
        return seen[-1]

    monkeypatch.setattr(exact, "_highs", loose)
    monkeypatch.setattr(exact, "_run", spy)
    inst = random_instance(10, 0)
    warm = solve_pyvrp(inst, seconds=None, max_iterations=200, seed=0).solution
    res = solve_exact(inst, seconds=60, strategy="monolithic", warm_start=warm)
    [(status, objective, bound, col)] = seen
    # guards: HiGHS said Optimal, had a solution, and its bound is below it by more than noise
    assert status == "Optimal" and col is not None
    assert res.solution is not None and res.objective == pytest.approx(objective)
    assert bound < objective * (1 - 1e-3)
    assert res.bound == bound
    assert not res.proven_optimal and res.status == "feasible"


@pytest.mark.parametrize("strategy", ["monolithic", "subsets"])
def test_highs_prints_nothing_unless_verbose(capfd, strategy):
    inst = tight_instance(4, 0)
    capfd.readouterr()
    res = solve_exact(inst, seconds=10, strategy=strategy, warm_start=False)
    assert res.proven_optimal  # the solver ran to the end
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    solve_exact(inst, seconds=10, strategy=strategy, warm_start=False, verbose=True)
    assert "HiGHS" in capfd.readouterr().out  # the check above can see HiGHS's output


def test_plumbing_of_warm_start_budget_seed_threads_and_strategy(monkeypatch):
    import clrp_rl4co.solvers.exact as exact
    import clrp_rl4co.solvers.pyvrp_solver as pyvrp_solver

    pyvrp_calls, strategy_calls, threads = [], [], []
    real_pyvrp, real_highs = pyvrp_solver.solve_pyvrp, exact._highs

    def pyvrp_spy(instance, seconds=None, seed=None, **kwargs):
        pyvrp_calls.append((seconds, seed, kwargs))
        return real_pyvrp(instance, seconds=None, max_iterations=30, seed=0)

    def highs_spy(model, n, verbose):
        threads.append(n)
        return real_highs(model, n, verbose)

    def strategy(name):
        def run(h, model, *args):
            *_, incumbent, warm, remaining = args
            strategy_calls.append((name, incumbent, warm, remaining()))
            return incumbent, None, False

        return run

    monkeypatch.setattr(pyvrp_solver, "solve_pyvrp", pyvrp_spy)
    monkeypatch.setattr(exact, "_highs", highs_spy)
    monkeypatch.setattr(exact, "_monolithic", strategy("monolithic"))
    monkeypatch.setattr(exact, "_subsets", strategy("subsets"))

    inst = random_instance(10, 0)
    start = time.perf_counter()
    res = exact.solve_exact(inst)  # the defaults: 60 s, 1 thread, warm start, seed 0, auto
    wall = time.perf_counter() - start
    [(ws, seed, extra)] = pyvrp_calls
    assert ws == pytest.approx(min(0.05 * 60, 0.1 + 0.05 * 10)) and seed == 0 and extra == {}
    assert threads == [1]
    [(name, incumbent, warm, remaining)] = strategy_calls
    assert name == "monolithic" and incumbent is not None
    model = build_model(inst)
    assert np.array_equal(warm, solution_values(model, inst, incumbent))
    assert 0 < remaining <= 60
    assert res.solution is incumbent and res.solver == "exact" and res.name == "clrp10_0"
    assert res.proven_optimal is False and res.status == "feasible" and res.bound is None
    assert 0 < res.runtime <= wall
    # the warm start's budget: 5% of a short limit, an explicit one, the seed passed on
    for kwargs, budget in (
        (dict(seconds=2.0), 0.1),
        (dict(seconds=2.0, warm_start_seconds=0.37), 0.37),
        (dict(seconds=60.0, seed=5), 0.6),
    ):
        pyvrp_calls.clear()
        exact.solve_exact(inst, threads=2, **kwargs)
        [(ws, seed, _)] = pyvrp_calls
        assert ws == pytest.approx(budget) and seed == kwargs.get("seed", 0)
    assert threads[-1] == 2
    # no warm start: no PyVRP run, nothing passed on
    pyvrp_calls.clear()
    strategy_calls.clear()
    exact.solve_exact(inst, warm_start=False)
    assert pyvrp_calls == [] and strategy_calls[0][1:3] == (None, None)
    # "auto": the monolithic model up to 12 customers, depot sets above
    for n, name in ((12, "monolithic"), (13, "subsets")):
        strategy_calls.clear()
        exact.solve_exact(random_instance(n, 0), warm_start=False)
        assert strategy_calls[0][0] == name, n
    with pytest.raises(ValueError, match="^unknown strategy 'fast'$"):
        exact.solve_exact(inst, warm_start=False, strategy="fast")


def test_highs_options_and_its_scheduler(monkeypatch):
    import highspy

    import clrp_rl4co.solvers.exact as exact
    import clrp_rl4co.solvers.highs as highs

    resets, real_reset = [], highspy.Highs.resetGlobalScheduler

    def reset(*args):
        resets.append(args)
        return real_reset(*args)

    monkeypatch.setattr(highspy.Highs, "resetGlobalScheduler", reset)
    saved = list(highs._scheduler_threads)
    highs._scheduler_threads.clear()  # as in a fresh process
    model = build_model(tight_instance(4, 0))
    h = exact._highs(model, 1, False)
    assert h.getOptionValue("threads")[1] == 1 and h.getOptionValue("mip_rel_gap")[1] == 0.0
    assert h.getOptionValue("output_flag")[1] is False
    assert resets == [] and highs._scheduler_threads == [1]
    exact._highs(model, 1, False)
    assert resets == []  # same count: the scheduler is kept
    h = exact._highs(model, 2, True)
    assert h.getOptionValue("threads")[1] == 2 and h.getOptionValue("output_flag")[1] is True
    assert resets == [(True,)] and highs._scheduler_threads == [2]
    # the time limit handed to HiGHS is at least 0.01 s
    exact._run(h, 0.0)
    assert h.getOptionValue("time_limit")[1] == 0.01
    exact._highs(model, saved[0] if saved else 1, False)  # HiGHS's scheduler as it was


def test_a_highs_failure_names_its_status():
    import highspy

    import clrp_rl4co.solvers.exact as exact

    class Failing:
        def setOptionValue(self, *args):
            pass

        def run(self):
            return highspy.HighsStatus.kError

        def getModelStatus(self):
            return highspy.HighsModelStatus.kSolveError

        def modelStatusToString(self, status):
            return f"<{status.name}>"

    with pytest.raises(RuntimeError, match="^HiGHS failed: <kSolveError>$"):
        exact._run(Failing(), 1.0)


def test_extract_reads_a_route_through_every_customer():

    inst = tight_instance(4, 0)
    roomy = CLRPInstance(
        depot_locs=inst.depot_locs,
        customer_locs=inst.customer_locs,
        depot_capacity=np.full(2, 100.0),
        opening_cost=inst.opening_cost,
        demand=inst.demand,
        vehicle_capacity=100.0,
        vehicle_fixed_cost=inst.vehicle_fixed_cost,
    )
    sol = CLRPSolution([Route(1, (2, 0, 3, 1))])
    model = build_model(roomy)
    assert extract_solution(model, solution_values(model, roomy, sol)) == sol


def test_the_optimality_tolerance_is_relative_above_one(monkeypatch):
    # |objective - bound| <= 1e-6 * max(1, |objective|): about 1e-5 for costs near 10, 1e-6 for
    # costs below 1
    import clrp_rl4co.solvers.exact as exact

    for scale in (1.0, 0.01):
        inst = tight_instance(4, 2)
        small = CLRPInstance(
            depot_locs=inst.depot_locs * scale,
            customer_locs=inst.customer_locs * scale,
            depot_capacity=inst.depot_capacity,
            opening_cost=inst.opening_cost * scale,
            demand=inst.demand,
            vehicle_capacity=inst.vehicle_capacity,
            vehicle_fixed_cost=inst.vehicle_fixed_cost * scale,
        )
        sol = solve_pyvrp(small, seconds=None, max_iterations=200).solution
        cost = sol.cost(small).total
        assert (cost > 2) if scale == 1.0 else (cost < 1)  # guard: both sides of max(1, .)
        tolerance = 1e-6 * max(1.0, cost)
        for gap, optimal in ((0.5 * tolerance, True), (1.5 * tolerance, False)):
            result = (sol, cost - gap, True)
            monkeypatch.setattr(exact, "_monolithic", lambda *a, r=result: r)
            res = exact.solve_exact(small, seconds=5, warm_start=False)
            assert res.proven_optimal is optimal, (scale, gap)
