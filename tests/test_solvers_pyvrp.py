"""PyVRP one-model solver: valid outputs, exact pricing, determinism, env adapters, Prins."""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np
import pytest
from instances import random_instance

from clrp_rl4co.data import (
    CLRPInstance,
    CLRPSolution,
    Route,
    instances_to_tensordict,
    prins_bks,
    prins_files,
    read_prodhon,
    tensordict_to_instances,
)
from clrp_rl4co.solvers import solve_pyvrp, solve_td
from clrp_rl4co.solvers.pyvrp_encoding import encode
from clrp_rl4co.solvers.set_estimate import SetEstimate
from clrp_rl4co.solvers.set_search import fleet_restricts
from clrp_rl4co.solvers.stopping import Deadline


def independent_cost(inst: CLRPInstance, sol: CLRPSolution) -> float:
    """Objective from the raw coordinates, without ``cost_matrix`` or ``CLRPSolution.cost``."""
    total = sum(float(inst.opening_cost[d]) for d in {r.depot for r in sol.routes})
    for r in sol.routes:
        pts = [inst.depot_locs[r.depot]] + [inst.customer_locs[c] for c in r.customers]
        pts.append(inst.depot_locs[r.depot])
        for a, b in zip(pts[:-1], pts[1:]):
            d = math.dist(a, b)
            total += math.ceil(100 * d - 1e-9) if inst.rounded_costs else d
        total += inst.vehicle_fixed_cost
    return total


def benchmarks_root():
    root = os.environ.get("CLRP_BENCHMARKS_DIR")
    if not root:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CLRP_BENCHMARKS_DIR must be set on CI")
        pytest.skip("CLRP_BENCHMARKS_DIR not set")
    return root


@pytest.mark.parametrize("num_customers,seed", [(10, 1), (20, 2), (50, 3)])
def test_outputs_valid_and_priced_exactly(num_customers, seed):
    inst = random_instance(num_customers, seed)
    res = solve_pyvrp(inst, seconds=0.5, seed=seed)
    assert res.status == "feasible" and not res.proven_optimal and res.bound is None
    res.solution.check(inst)
    assert res.objective == pytest.approx(independent_cost(inst, res.solution), rel=1e-12)


def test_depot_capacity_binds():
    # Depot 0 is free and central but can hold only 30: the rest must go to depot 1.
    rng = np.random.default_rng(7)
    inst = CLRPInstance(
        depot_locs=np.array([[0.5, 0.5], [0.0, 0.0]]),
        customer_locs=rng.random((8, 2)),
        depot_capacity=np.array([30.0, 500.0]),
        opening_cost=np.array([0.0, 3.0]),
        demand=np.full(8, 15.0),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
    )
    res = solve_pyvrp(inst, seconds=None, max_iterations=500)
    res.solution.check(inst)
    loads = {d: 0.0 for d in (0, 1)}
    for r in res.solution.routes:
        loads[r.depot] += inst.demand[list(r.customers)].sum()
    assert loads[0] <= 30.0 and loads[1] >= 90.0


def test_real_valued_demands_are_scaled_conservatively():
    rng = np.random.default_rng(3)
    inst = CLRPInstance(
        depot_locs=rng.random((3, 2)),
        customer_locs=rng.random((12, 2)),
        depot_capacity=np.array([60.25, 60.25, 60.25]),
        opening_cost=np.array([1.5, 2.5, 2.0]),
        demand=rng.uniform(5.0, 12.0, 12),
        vehicle_capacity=30.5,
        vehicle_fixed_cost=0.75,
    )
    enc = encode(inst)
    assert enc.data.vehicle_types()[0].capacity == [30500]
    res = solve_pyvrp(inst, seconds=None, max_iterations=1000)
    res.solution.check(inst)
    assert res.objective == pytest.approx(independent_cost(inst, res.solution), rel=1e-12)


def test_deterministic_with_iterations_and_seed():
    inst = random_instance(20, 5)
    a = solve_pyvrp(inst, seconds=None, max_iterations=800, seed=3)
    b = solve_pyvrp(inst, seconds=None, max_iterations=800, seed=3)
    assert a.solution.to_dict() == b.solution.to_dict() and a.objective == b.objective
    c = solve_pyvrp(inst, seconds=None, max_iterations=400, seed=3, depot_search=True)
    d = solve_pyvrp(inst, seconds=None, max_iterations=400, seed=3, depot_search=True)
    assert c.solution.to_dict() == d.solution.to_dict()


def test_solve_td_over_processes_matches_one_process():
    """``num_procs`` changes where the rows are solved, not what is found: an iteration
    budget gives the same actions and costs, row for row, over one process and two."""
    td = instances_to_tensordict([random_instance(10, s) for s in range(4)])
    serial = solve_td(td, seconds=None, max_iterations=300, num_procs=1)
    parallel = solve_td(td, seconds=None, max_iterations=300, num_procs=2)
    assert serial[0].tolist() == parallel[0].tolist()
    assert serial[1].tolist() == parallel[1].tolist()


def test_solve_td_actions_and_costs():
    td = instances_to_tensordict([random_instance(10, s) for s in range(3)])
    insts = tensordict_to_instances(td)  # float32 fields as the env sees them
    actions, costs = solve_td(td, seconds=None, max_iterations=300)
    assert actions.dtype.is_floating_point is False and actions.shape[0] == 3
    assert costs.dtype == np.float64 or str(costs.dtype) == "torch.float64"
    for b, inst in enumerate(insts):
        row = actions[b].tolist()
        sol = CLRPSolution.from_actions(row, inst.num_depots)
        sol.check(inst)
        assert costs[b].item() > 0
        assert costs[b].item() == pytest.approx(independent_cost(inst, sol), rel=1e-12)
        unpadded = sol.to_actions(inst.num_depots)
        assert row[: len(unpadded)] == unpadded
        assert all(a == row[len(unpadded) - 1] for a in row[len(unpadded) :])


def test_unknown_solver_and_infeasible_raise():
    td = instances_to_tensordict([random_instance(10, 0)])
    with pytest.raises(ValueError, match="^solver: expected one of .*, got 'gurobi'$"):
        solve_td(td, seconds=1.0, solver="gurobi")
    inst = CLRPInstance(
        depot_locs=np.zeros((3, 2)),
        customer_locs=np.ones((3, 2)),
        depot_capacity=np.array([30.0, 30.0, 10.0]),
        opening_cost=np.ones(3),
        demand=np.array([25.0, 25.0, 10.0]),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
    )
    # Total capacity 70 >= 60, but both 25-customers need the 30-depots: fine; make it fail
    # (a changed copy: the arrays cannot change in place after the instance's check)
    solve_pyvrp(inst, seconds=None, max_iterations=50)
    with pytest.raises(ValueError, match="read-only"):
        inst.depot_capacity[:] = [30.0, 24.0, 24.0]
    with pytest.raises(ValueError, match="demand >= 25"):
        dataclasses.replace(inst, depot_capacity=np.array([30.0, 24.0, 24.0]))


def test_prins_instance_near_bks():
    root = benchmarks_root()
    path = next(p for p in prins_files(root) if p.stem == "coord20-5-1")
    inst = read_prodhon(path)
    res = solve_pyvrp(inst, seconds=2.0)
    res.solution.check(inst)
    assert res.objective == independent_cost(inst, res.solution)
    bks = prins_bks()["coord20-5-1"].current
    assert bks <= res.objective <= 1.01 * bks


def large_instance(seed: int) -> CLRPInstance:
    """The clrp100 distribution: 20 depots, capacity U[500, 900), opening U[5, 15)."""
    rng = np.random.default_rng(seed)
    return CLRPInstance(
        depot_locs=rng.random((20, 2)),
        customer_locs=rng.random((100, 2)),
        depot_capacity=rng.uniform(500, 900, 20),
        opening_cost=rng.uniform(5, 15, 20),
        demand=rng.integers(10, 20, 100).astype(float),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
        name=f"clrp100_{seed}",
    )


def test_set_estimate_ranks_feasible_small_sets():
    inst = large_instance(4)
    est = SetEstimate(inst)
    ranked = est.best_sets()
    assert ranked and all(math.isfinite(est(s)) for s in ranked)
    assert [est(s) for s in ranked] == sorted(est(s) for s in ranked)
    best = list(ranked[0])
    # Enough capacity, and far fewer depots than the 15-16 the one-model run keeps open.
    assert inst.depot_capacity[best].sum() >= inst.total_demand() and len(best) <= 5
    small = int(np.argmin(inst.depot_capacity))
    assert est((small,)) == math.inf  # one depot cannot hold ~1450 units of demand
    # Exhaustive on few depots: every feasible non-empty subset of 5 depots is ranked.
    inst5 = random_instance(20, 6)
    ranked5 = SetEstimate(inst5).best_sets()
    subsets = [tuple(d for d in range(5) if m >> d & 1) for m in range(1, 32)]
    need = inst5.total_demand()
    feasible = [s for s in subsets if inst5.depot_capacity[list(s)].sum() >= need]
    assert sorted(ranked5) == sorted(feasible)


def test_depot_search_on_many_depots_valid_and_deterministic():
    inst = large_instance(5)
    a = solve_pyvrp(inst, seconds=None, max_iterations=300, seed=1)
    b = solve_pyvrp(inst, seconds=None, max_iterations=300, seed=1)
    a.solution.check(inst)
    assert a.solution.to_dict() == b.solution.to_dict()
    assert a.objective == pytest.approx(independent_cost(inst, a.solution), rel=1e-12)
    assert len(a.solution.open_depots) <= 6
    # A warm start is kept when nothing beats it, and the result is never worse.
    c = solve_pyvrp(inst, seconds=None, max_iterations=100, seed=2, initial=a.solution)
    c.solution.check(inst)
    assert c.objective <= a.objective + 1e-9


def packing_infeasible() -> CLRPInstance:
    """Three customers of demand 20, two depots of capacity 30: total capacity 60 = total demand
    and every customer fits a depot, so the input check passes, but no depot holds two of them."""
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [1.0, 1.0]]),
        customer_locs=np.array([[0.2, 0.1], [0.5, 0.5], [0.9, 0.8]]),
        depot_capacity=np.array([30.0, 30.0]),
        opening_cost=np.ones(2),
        demand=np.array([20.0, 20.0, 20.0]),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
        name="packing",
    )


@pytest.mark.parametrize("depot_search", [False, True])
def test_no_feasible_solution_is_no_solution(depot_search):
    # The documented outcome when PyVRP finds nothing: a result without a solution, no error.
    inst = packing_infeasible()
    res = solve_pyvrp(inst, seconds=None, max_iterations=50, depot_search=depot_search)
    assert res.status == "no solution"
    assert res.solution is None and res.objective is None and not res.proven_optimal


def test_invalid_initial_solution_raises():
    inst = random_instance(10, 0)
    # Customer 9 is not served (and the one route breaks the vehicle capacity of 70).
    bad = CLRPSolution([Route(0, tuple(range(9)))])
    with pytest.raises(ValueError, match="'clrp10_0'.*initial solution is invalid"):
        solve_pyvrp(inst, seconds=None, max_iterations=50, initial=bad)


@pytest.mark.parametrize("depot_search", [False, True])
def test_decoding_bug_raises(monkeypatch, depot_search):
    # An encoding / decoding bug that loses a customer must surface, not become "no solution".
    import clrp_rl4co.solvers.pyvrp_solver as pyvrp_solver

    real = pyvrp_solver.decode

    def lossy(enc, solution):
        sol = real(enc, solution)
        first = sol.routes[0]
        routes = [Route(first.depot, first.customers[1:])] if len(first.customers) > 1 else []
        return CLRPSolution(routes + sol.routes[1:])

    monkeypatch.setattr(pyvrp_solver, "decode", lossy)
    with pytest.raises(ValueError, match="'clrp10_1'.*invalid solution.*not served"):
        solve_pyvrp(
            random_instance(10, 1), seconds=None, max_iterations=50, depot_search=depot_search
        )


def many_depots_instance(num_customers: int, num_depots: int, seed: int) -> CLRPInstance:
    rng = np.random.default_rng(seed)
    demand = rng.integers(10, 20, num_customers).astype(float)
    return CLRPInstance(
        depot_locs=rng.random((num_depots, 2)),
        customer_locs=rng.random((num_customers, 2)),
        depot_capacity=np.full(num_depots, 3.0 * demand.sum() / num_depots),
        opening_cost=rng.uniform(5, 15, num_depots),
        demand=demand,
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
    )


def test_depot_set_ranking_stops_at_its_time_limit():
    """60 depots: the full ranking takes seconds; with a limit it returns the sets estimated
    so far, each priced as the unlimited ranking prices it."""
    import time

    instance = many_depots_instance(300, 60, seed=1)
    est = SetEstimate(instance)
    began = time.perf_counter()
    ranked = est.best_sets(deadline=Deadline(0.2))
    assert time.perf_counter() - began < 0.2 + 0.5
    assert ranked and all(math.isfinite(est(s)) for s in ranked)
    fresh = SetEstimate(instance)
    assert [fresh(s) for s in ranked[:5]] == [est(s) for s in ranked[:5]]
    assert est._deadline is None  # later calls are not limited


def test_depot_search_respects_a_short_time_limit():
    import time

    instance = many_depots_instance(300, 60, seed=2)
    began = time.perf_counter()
    result = solve_pyvrp(instance, seconds=1.0)
    assert time.perf_counter() - began < 1.0 + 1.5
    result.solution.check(instance)


def test_penalty_bound_warning_is_logged_not_shown(monkeypatch, caplog):
    """PyVRP's PenaltyBoundWarning becomes a debug log line saying what it means; any other
    PyVRP warning is shown as it is."""
    import logging
    import warnings

    import pyvrp
    from pyvrp.exceptions import PenaltyBoundWarning

    from clrp_rl4co.solvers import pyvrp_solver

    real_solve = pyvrp.solve

    def noisy_solve(*args, **kwargs):
        warnings.warn("penalty at its bound", PenaltyBoundWarning, stacklevel=1)
        warnings.warn("something else", RuntimeWarning, stacklevel=1)
        return real_solve(*args, **kwargs)

    monkeypatch.setattr(pyvrp_solver.pyvrp, "solve", noisy_solve)
    instance = random_instance(8, seed=3, num_depots=2)
    with caplog.at_level(logging.DEBUG, logger="clrp_rl4co.solvers.pyvrp_solver"):
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            result = solve_pyvrp(instance, max_iterations=50, seconds=None, depot_search=False)
    result.solution.check(instance)
    assert [w.category for w in shown] == [RuntimeWarning]
    assert [str(w.message) for w in shown] == ["something else"]  # worded as PyVRP worded it
    assert any("penalty" in r.getMessage() and "tight" in r.getMessage() for r in caplog.records)
    # the note says whether PyVRP's result was feasible (it was: the solution is valid)
    assert any(r.getMessage().endswith("feasible result: True") for r in caplog.records)


def line_of_customers() -> CLRPInstance:
    """Two depots of capacity 100 and six customers of demand 10 between them; q = 70."""
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [7.0, 0.0]]),
        customer_locs=np.array([[float(k), 1.0] for k in range(1, 7)]),
        depot_capacity=np.full(2, 100.0),
        opening_cost=np.full(2, 3.0),
        demand=np.full(6, 10.0),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
        name="line",
    )


def route_set(solution: CLRPSolution) -> list[tuple[int, tuple[int, ...]]]:
    return sorted((r.depot, tuple(r.customers)) for r in solution.routes)


def test_with_no_iterations_pyvrp_returns_the_warm_start():
    """PyVRP starts from the warm start: with no iteration to improve it, it is the result (one
    route per customer, far from what PyVRP's own start and local search would give)."""
    from clrp_rl4co.solvers.pyvrp_solver import run_pyvrp

    instance = line_of_customers()
    start = CLRPSolution([Route(j % 2, (j,)) for j in range(6)])
    start.check(instance)
    found = run_pyvrp(encode(instance), None, max_iterations=0, initial=start)
    assert route_set(found) == route_set(start)


def test_a_run_hands_pyvrp_its_seed_and_its_give_up_criterion(monkeypatch):
    from pyvrp.stop import MaxIterations

    from clrp_rl4co.solvers import pyvrp_solver
    from clrp_rl4co.solvers.stopping import DeadlineReached, NoFeasibleBy, StopRequested

    real_solve = pyvrp_solver.pyvrp.solve
    seen = []

    def solve(data, stop, **kwargs):
        seen.append((stop, kwargs))
        return real_solve(data, stop, **kwargs)

    monkeypatch.setattr(pyvrp_solver.pyvrp, "solve", solve)
    enc = encode(line_of_customers())
    pyvrp_solver.run_pyvrp(enc, None, max_iterations=20)
    pyvrp_solver.run_pyvrp(enc, 5.0, max_iterations=20, seed=5, give_up=2.5)
    assert [kwargs["seed"] for _, kwargs in seen] == [0, 5]  # seed 0 by default
    criteria = seen[1][0].criteria
    assert [type(c) for c in criteria] == [
        NoFeasibleBy, MaxIterations, DeadlineReached, StopRequested
    ]  # fmt: skip
    assert criteria[0].deadline.seconds == 2.5 and criteria[2].deadline.seconds == 5.0


def test_pyvrps_other_warnings_reach_the_caller_under_the_callers_filters(monkeypatch):
    """Shown as they are: under the "default" action a warning repeated from one line shows
    once, as it would without the solver in between."""
    import warnings

    from clrp_rl4co.solvers import pyvrp_solver

    real_solve = pyvrp_solver.pyvrp.solve

    def noisy_solve(*args, **kwargs):
        for _ in range(2):
            warnings.warn("something else", RuntimeWarning, stacklevel=1)
        return real_solve(*args, **kwargs)

    monkeypatch.setattr(pyvrp_solver.pyvrp, "solve", noisy_solve)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")
        pyvrp_solver.run_pyvrp(encode(line_of_customers()), None, max_iterations=10)
    assert [str(w.message) for w in shown if w.category is RuntimeWarning] == ["something else"]


def solve_pyvrp_with_fakes(monkeypatch, search_finds, run_finds):
    """``solve_pyvrp`` with the depot-set search and the one-model run replaced: each records
    its call and returns what it is given."""
    from clrp_rl4co.solvers import pyvrp_solver

    calls = []

    def search(instance, seconds, max_iterations, seed, initial=None):
        calls.append(("search", initial))
        return search_finds

    def run(enc, seconds, max_iterations, seed, initial):
        calls.append(("run", initial))
        return run_finds

    monkeypatch.setattr(pyvrp_solver, "depot_set_search", search)
    monkeypatch.setattr(pyvrp_solver, "run_pyvrp", run)
    return calls


def test_two_depots_are_searched_and_a_dearer_warm_start_is_not_kept(monkeypatch):
    """Two depots are enough for the depot-set search; without it the run is warm-started;
    a warm start dearer than what they find is not the result."""
    instance = line_of_customers()
    cheap = CLRPSolution([Route(0, (0, 1, 2)), Route(1, (3, 4, 5))])
    dear = CLRPSolution([Route(1, (j,)) for j in range(6)])
    assert independent_cost(instance, dear) > independent_cost(instance, cheap)
    calls = solve_pyvrp_with_fakes(monkeypatch, cheap, cheap)
    assert solve_pyvrp(instance, seconds=None, max_iterations=9, initial=dear).solution is cheap
    assert calls == [("search", dear)]
    calls.clear()
    alone = solve_pyvrp(instance, None, 9, depot_search=False, initial=dear)
    assert alone.solution is cheap and calls == [("run", dear)]


def test_the_runtime_is_the_wall_time_of_the_whole_solve(monkeypatch):
    """Read on ``time.perf_counter`` at the start and at the end: 3.5 s apart here."""
    from clrp_rl4co.solvers import pyvrp_solver

    class Time:
        reads = iter([100.0, 103.5])

        def perf_counter(self):
            return next(self.reads)

    solve_pyvrp_with_fakes(monkeypatch, CLRPSolution([Route(0, (0, 1, 2)), Route(1, (3, 4, 5))]),
                           None)  # fmt: skip
    monkeypatch.setattr(pyvrp_solver, "time", Time())
    assert solve_pyvrp(line_of_customers(), seconds=None, max_iterations=9).runtime == 3.5


def test_fleet_restricts_from_its_definition():
    # q = 70, demand 155 needs 3 routes; depot 0 holds floor(170 / 70) = 2 full vehicles,
    # depot 1 floor(135 / 70) = 1, depot 2 exactly 2 (140)
    inst = CLRPInstance(
        depot_locs=np.zeros((3, 2)), customer_locs=np.ones((3, 2)),
        depot_capacity=np.array([170.0, 135.0, 140.0]), opening_cost=np.ones(3),
        demand=np.array([55.0, 50.0, 50.0]), vehicle_capacity=70.0, vehicle_fixed_cost=1.0,
    )  # fmt: skip
    assert fleet_restricts(inst, (0,)) and fleet_restricts(inst, (2,))
    assert not fleet_restricts(inst, (0, 1))  # 2 + 1 full vehicles for 3 routes
    exact_two = dataclasses.replace(inst, demand=np.array([50.0, 50.0, 40.0]))  # 2 routes
    assert not fleet_restricts(exact_two, (2,)) and fleet_restricts(exact_two, (1,))


#: Instance 76 of the published clrp10 test set (coordinates rounded to 6 digits): the optimum
#: opens depot 4 alone (capacity 170 for a demand of 155, q 70), where the fleet encoding holds
#: two vehicles of 70 and one of 30 and so misses it.
TIGHT_DEPOTS = [(0.180645, 0.810357, 160.44, 2.55522), (0.306969, 0.185586, 134.48, 1.25413),
                (0.821773, 0.580938, 165.976, 3.43634), (0.619659, 0.218969, 217.228, 2.3221),
                (0.622505, 0.748804, 170.117, 1.07497)]  # fmt: skip
TIGHT_CUSTOMERS = [(0.0195426, 0.974039, 19), (0.79383, 0.309354, 16), (0.790555, 0.246398, 14),
                   (0.739545, 0.0845412, 17), (0.804139, 0.133182, 14), (0.486214, 0.0198954, 13),
                   (0.0878221, 0.319448, 15), (0.362773, 0.889409, 15), (0.179855, 0.0348431, 15),
                   (0.382687, 0.914567, 17)]  # fmt: skip


def test_a_tight_one_depot_set_is_compared_at_its_best_routes():
    from clrp_rl4co.solvers import solve_exact

    depots, customers = np.array(TIGHT_DEPOTS), np.array(TIGHT_CUSTOMERS)
    inst = CLRPInstance(
        depot_locs=depots[:, :2], customer_locs=customers[:, :2], depot_capacity=depots[:, 2],
        opening_cost=depots[:, 3], demand=customers[:, 2], vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
    )  # fmt: skip
    exact = solve_exact(inst, seconds=60)
    assert exact.status == "optimal" and exact.solution.open_depots == (4,)
    found = solve_pyvrp(inst, seconds=None, max_iterations=2000, seed=0)
    assert found.solution.open_depots == (4,)
    assert independent_cost(inst, found.solution) == pytest.approx(
        independent_cost(inst, exact.solution), rel=1e-9
    )
