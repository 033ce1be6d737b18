"""The exact solver's MIP against its documented model (the docstring of
``solvers/exact_model.py``):

- every valid CLRP solution of a small instance is a feasible point of the MIP, with the
  solution's cost as objective (the warm-start vector ``solution_values`` included);
- the LP relaxation equals that of the model written out independently here from the
  docstring (scipy's ``linprog``), so no documented constraint is missing, loosened or tightened;
- the depot-set strategy finds the brute-force optimum when several depot sets compete, and
  under a clock that runs out it reports what it has (not proven, bound from the open sets).
"""

from __future__ import annotations

import itertools
import math

import highspy
import numpy as np
import pytest
from scipy.optimize import linprog
from test_solvers_exact import brute_force, tight_instance

import clrp_rl4co.solvers.exact as exact
from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route
from clrp_rl4co.solvers.exact_model import build_model, extract_solution, solution_values


def three_depots(
    num_customers: int, seed: int, capacity=(45.0, 60.0, 100.0), opening=(0.3, 0.5, 1.2)
) -> CLRPInstance:
    """Three depots of unequal capacity and opening cost: several depot sets compete."""
    rng = np.random.default_rng(2000 + seed)
    return CLRPInstance(
        depot_locs=rng.random((3, 2)),
        customer_locs=rng.random((num_customers, 2)),
        depot_capacity=np.array(capacity),
        opening_cost=np.array(opening),
        demand=rng.integers(10, 20, num_customers).astype(float),
        vehicle_capacity=35.0,
        vehicle_fixed_cost=0.2,
        rounded_costs=bool(seed % 2),
        name=f"three{num_customers}_{seed}",
    )


def valid_solutions(inst: CLRPInstance):
    """Every valid solution: routes (partition blocks in every order) at every depot."""
    customers = list(range(inst.num_customers))

    def partitions(items):
        if not items:
            yield []
            return
        first, rest = items[0], items[1:]
        for part in partitions(rest):
            for k in range(len(part)):
                yield part[:k] + [[first] + part[k]] + part[k + 1 :]
            yield [[first]] + part

    for part in partitions(customers):
        orders = [list(itertools.permutations(block)) for block in part]
        for depots in itertools.product(range(inst.num_depots), repeat=len(part)):
            for chosen in itertools.product(*orders):
                sol = CLRPSolution([Route(i, tuple(b)) for i, b in zip(depots, chosen)])
                try:
                    sol.check(inst)
                except ValueError:
                    continue
                yield sol


def _feasible(model, vector, tol=1e-7) -> bool:
    if (vector < model.lower - tol).any() or (vector > model.upper + tol).any():
        return False
    integral = np.abs(vector[model.integer] - np.round(vector[model.integer])) <= tol
    if not integral.all():
        return False
    for idx, val, lo, hi in model.rows:
        activity = float(np.dot(vector[idx], val))
        if activity < lo - tol or activity > hi + tol:
            return False
    return True


@pytest.mark.parametrize(
    "make", [lambda: tight_instance(3, 0), lambda: three_depots(3, 0), lambda: three_depots(3, 1)]
)
def test_every_valid_solution_is_a_point_of_the_mip(make):
    inst = make()  # binding route capacities (q = 35), and depot capacities on the first
    model = build_model(inst)
    count = 0
    for sol in valid_solutions(inst):
        vector = solution_values(model, inst, sol)
        assert _feasible(model, vector), sol
        assert float(model.cost @ vector) == pytest.approx(sol.cost(inst).total, rel=1e-12)
        assert extract_solution(model, vector).cost(inst).total == pytest.approx(
            sol.cost(inst).total, rel=1e-12
        )
        count += 1
    assert count >= 6  # guard: the enumeration found solutions to check
    # and a point that breaks the vehicle capacity is not: one route with everything
    overloaded = CLRPSolution([Route(1, (0, 1, 2))])
    with pytest.raises(ValueError, match="vehicle capacity"):
        overloaded.check(inst)
    assert not _feasible(model, solution_values(model, inst, overloaded))


def documented_lp(inst: CLRPInstance) -> float:
    """The LP relaxation of the model in the docstring of ``solvers/exact_model.py``, written
    out."""
    nd, nc = inst.num_depots, inst.num_customers
    d, q, cap = inst.demand, inst.vehicle_capacity, inst.depot_capacity
    c = inst.cost_matrix()
    depots, customers = range(nd), range(nc)
    arcs = [(i, nd + j) for i in depots for j in customers]
    arcs += [(nd + j, i) for i in depots for j in customers]
    arcs += [
        (nd + j, nd + k) for j in customers for k in customers if j != k and d[j] + d[k] <= q + 1e-9
    ]
    into = [a for a in arcs if a[1] >= nd]
    col: dict = {}
    for i in depots:
        col["y", i] = len(col)
    for i in depots:
        for j in customers:
            col["z", i, j] = len(col)
    for a in arcs:
        col["x", a] = len(col)
    for a in into:
        col["f", a] = len(col)
    n = len(col)
    cost = np.zeros(n)
    for i in depots:
        cost[col["y", i]] = inst.opening_cost[i]
    for a in arcs:
        cost[col["x", a]] = c[a] + (inst.vehicle_fixed_cost if a[0] < nd else 0.0)
    upper = np.ones(n)
    for a in into:
        upper[col["f", a]] = q
    eq_rows, eq_rhs, ub_rows, ub_rhs = [], [], [], []

    def row(terms, rhs, kind):
        r = np.zeros(n)
        for key, coef in terms:
            r[col[key]] += coef
        (eq_rows if kind == "=" else ub_rows).append(r if kind != ">=" else -r)
        (eq_rhs if kind == "=" else ub_rhs).append(rhs if kind != ">=" else -rhs)

    for j in customers:
        v = nd + j
        row([(("z", i, j), 1) for i in depots], 1, "=")  # one depot per customer
        row([(("x", a), 1) for a in arcs if a[1] == v], 1, "=")  # in-degree 1
        row([(("x", a), 1) for a in arcs if a[0] == v], 1, "=")  # out-degree 1
        flow = [(("f", a), 1) for a in into if a[1] == v]
        flow += [(("f", a), -1) for a in into if a[0] == v]
        row(flow, d[j], "=")  # the flow drops d_j at j
        for i in depots:
            row([(("z", i, j), 1), (("y", i), -1)], 0, "<=")  # z_ij <= y_i
            row([(("x", (i, v)), 1), (("z", i, j), -1)], 0, "<=")
            row([(("x", (v, i)), 1), (("z", i, j), -1)], 0, "<=")
    for a in into:
        u, v = a
        top = q if u < nd else q - d[u - nd]
        row([(("f", a), 1), (("x", a), -top)], 0, "<=")  # f_a <= (q - d_u) x_a
        row([(("f", a), 1), (("x", a), -d[v - nd])], 0, ">=")  # f_a >= d_v x_a
    for j, k in itertools.combinations(customers, 2):
        pair = [(("x", a), 1) for a in ((nd + j, nd + k), (nd + k, nd + j)) if a in arcs]
        if not pair:
            continue
        row(pair, 1, "<=")
        for i in depots:  # a customer-customer arc stays within one depot's customers
            row(pair + [(("z", i, j), 1), (("z", i, k), -1)], 1, "<=")
            row(pair + [(("z", i, j), -1), (("z", i, k), 1)], 1, "<=")
    for i in depots:
        served = [(("z", i, j), d[j]) for j in customers]
        out = [(("x", (i, nd + j)), 1) for j in customers]
        back = [(("x", (nd + j, i)), 1) for j in customers]
        row(served + [(("y", i), -cap[i])], 0, "<=")  # depot capacity
        row([(("f", (i, nd + j)), 1) for j in customers] + [(k, -w) for k, w in served], 0, "=")
        row([(k, q * w) for k, w in out] + [(k, -w) for k, w in served], 0, ">=")  # routes
        row(out + [(k, -w) for k, w in back], 0, "=")  # depot in-degree = out-degree
    all_out = [(("x", (i, nd + j)), 1) for i in depots for j in customers]
    row(all_out, math.ceil(d.sum() / q - 1e-9), ">=")
    row([(("y", i), cap[i]) for i in depots], float(d.sum()), ">=")
    res = linprog(
        cost,
        A_ub=np.array(ub_rows),
        b_ub=np.array(ub_rhs),
        A_eq=np.array(eq_rows),
        b_eq=np.array(eq_rhs),
        bounds=list(zip(np.zeros(n), upper)),
        method="highs",
    )
    assert res.status == 0, res.message
    return float(res.fun)


def package_lp(inst: CLRPInstance) -> float:
    model = build_model(inst)
    h = exact._highs(model, 1, False)
    ncol = len(model.cost)
    h.changeColsIntegrality(
        ncol, np.arange(ncol, dtype=np.int32), [highspy.HighsVarType.kContinuous] * ncol
    )
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    return float(h.getInfo().objective_function_value)


@pytest.mark.parametrize(
    "make",
    [
        lambda: tight_instance(4, 0),
        lambda: tight_instance(5, 1),
        lambda: three_depots(5, 0),
        lambda: three_depots(4, 1),
    ],
)
def test_lp_relaxation_is_the_documented_model(make):
    inst = make()
    expected = documented_lp(inst)
    assert package_lp(inst) == pytest.approx(expected, rel=1e-7, abs=1e-7)
    # guard: the relaxation is not the optimum, so its value depends on every constraint
    assert expected < brute_force(inst) - 1e-3


@pytest.mark.parametrize("num_customers,seed", [(5, 0), (5, 1), (6, 2)])
def test_depot_sets_compete_and_the_best_is_found(num_customers, seed):
    inst = three_depots(num_customers, seed)
    need = inst.total_demand()
    sets = [s for r in (1, 2, 3) for s in itertools.combinations(range(3), r)]
    feasible = [s for s in sets if inst.depot_capacity[list(s)].sum() >= need]
    assert len(feasible) >= 3  # guard: several depot sets to rank, fix and solve
    optimum = brute_force(inst)
    for warm in (False, True):
        res = exact.solve_exact(inst, seconds=30, strategy="subsets", warm_start=warm)
        assert res.proven_optimal and res.status == "optimal"
        assert res.objective == pytest.approx(optimum, rel=1e-9, abs=1e-9)
        assert res.bound == pytest.approx(optimum, rel=1e-6)


def test_a_single_depot_can_be_the_best_set():
    # depot 2 holds everything and is close to the customers: the optimum opens it alone
    inst = three_depots(5, 2, capacity=(45.0, 60.0, 200.0), opening=(5.0, 5.0, 0.1))
    opt = exact.solve_exact(inst, seconds=30, strategy="subsets", warm_start=False)
    assert opt.proven_optimal
    assert opt.objective == pytest.approx(brute_force(inst), rel=1e-9)
    assert len(opt.solution.open_depots) == 1  # guard: the singleton case is exercised


def _clock(ticks: int, seconds: float = 0.5):
    """remaining() for _subsets: ``seconds`` for the first ``ticks`` calls, then 0."""
    calls = []

    def remaining():
        calls.append(1)
        return seconds if len(calls) <= ticks else 0.0

    return remaining


def test_depot_sets_under_a_clock_that_runs_out():
    # five feasible depot sets; the clock is asked twice per LP bound and twice per MIP
    inst = three_depots(5, 0)
    need = inst.total_demand()
    sets = [s for r in (1, 2, 3) for s in itertools.combinations(range(3), r)]
    k = sum(inst.depot_capacity[list(s)].sum() >= need for s in sets)
    assert k == 5
    model = build_model(inst)
    optimum = brute_force(inst)
    worse = CLRPSolution([Route(2, (c,)) for c in range(5)])  # valid, far from optimal
    worse_cost = worse.cost(inst).total
    assert worse_cost > optimum + 1

    limits = []

    def search(ticks, incumbent=worse, seconds=0.5):
        h = exact._highs(model, 1, False)
        run = h.run

        def recorded():  # every HiGHS run (LP bound or MIP) gets the clock's time as limit
            limits.append(h.getOptionValue("time_limit")[1])
            return run()

        h.run = recorded
        return exact._subsets(h, model, inst, incumbent, None, _clock(ticks, seconds))

    # enough time: the optimum, proven, bound = optimum
    best, bound, proven = search(10**6, seconds=60.0)
    assert best.cost(inst).total == pytest.approx(optimum) and proven is True
    assert bound == pytest.approx(optimum)
    limits.clear()
    # no time at all: no solution of its own, no bound, not proven
    assert search(0, incumbent=None) == (None, None, False)
    best, bound, proven = search(0)
    assert best is worse and bound is None and proven is False
    assert limits == []  # nothing was run
    # time for two LP bounds: the sets without one have bound -inf, so no bound at all
    best, bound, proven = search(4)
    assert best is worse and bound is None and proven is False
    assert len(limits) == 2 and all(limit <= 0.5 for limit in limits)
    # time for the LP bounds only: the incumbent, the smallest LP bound, not proven
    best, bound, proven = search(2 * k)
    assert best is worse and proven is False
    assert bound is not None and bound < optimum - 1e-6
    # and for one MIP (k LP runs, then the MIP of the set of smallest LP bound, whose limit is
    # the clock's last tick: HiGHS's floor of 0.01 s): still not proven; the bound is still a
    # valid lower bound, and no lower than the smallest LP bound (that set's MIP may raise its
    # own dual bound, or settle the set, within its 0.01 s on a fast machine)
    limits.clear()
    best, bound2, proven = search(2 * k + 1)
    assert len(limits) == k + 1 and all(limit <= 0.5 for limit in limits)
    assert best.cost(inst).total <= worse_cost and proven is False
    assert bound - 1e-9 <= bound2 <= optimum + 1e-6


def test_subsets_sets_the_incumbent_as_objective_bound(monkeypatch):
    inst = three_depots(5, 1)
    seen = []
    run = exact._run

    def spy(h, time_limit):
        seen.append(h.getOptionValue("objective_bound")[1])
        return run(h, time_limit)

    monkeypatch.setattr(exact, "_run", spy)
    good = exact.solve_exact(inst, seconds=30, strategy="subsets", warm_start=False).solution
    seen.clear()
    res = exact.solve_exact(inst, seconds=30, strategy="subsets", warm_start=good)
    assert res.proven_optimal
    # every MIP of a depot set is told the incumbent's cost: nothing worse is worth finding
    assert seen and all(b == pytest.approx(good.cost(inst).total) for b in seen)


def test_columns_integer_as_documented():
    # y, z and x are binary; the load flows f are continuous
    model = build_model(three_depots(4, 0))
    flows = np.array(sorted(model.f.values()))
    assert len(flows) > 0 and flows.min() == model.x[-1] + 1
    assert model.integer[model.y].all() and model.integer[model.z.ravel()].all()
    assert model.integer[model.x].all() and not model.integer[flows].any()
    assert len(model.integer) == len(model.cost) == flows.max() + 1


def test_full_vehicles_need_exactly_total_over_capacity_routes():
    # total demand 60 = 3 x q: the optimum fills three vehicles, as the route-count row allows
    rng = np.random.default_rng(5)
    inst = CLRPInstance(
        depot_locs=rng.random((2, 2)),
        customer_locs=rng.random((6, 2)),
        depot_capacity=np.array([40.0, 40.0]),
        opening_cost=np.array([0.5, 0.5]),
        demand=np.full(6, 10.0),
        vehicle_capacity=20.0,
        vehicle_fixed_cost=5.0,  # routes are dear: the optimum uses as few as possible
    )
    optimum = brute_force(inst)
    for strategy in ("monolithic", "subsets"):
        res = exact.solve_exact(inst, seconds=30, strategy=strategy, warm_start=False)
        assert res.proven_optimal and res.objective == pytest.approx(optimum, rel=1e-9)
        assert res.solution.num_routes == 3


def test_a_depot_set_holding_exactly_the_total_demand_is_tried():
    # depots of 32 and 20 for demands 10, 10, 15, 17 (52): only both together hold it, exactly
    # (depot 1 takes the two 10s, depot 0 the 15 and the 17)
    rng = np.random.default_rng(6)
    inst = CLRPInstance(
        depot_locs=rng.random((2, 2)),
        customer_locs=rng.random((4, 2)),
        depot_capacity=np.array([32.0, 20.0]),
        opening_cost=np.array([0.5, 0.5]),
        demand=np.array([10.0, 10.0, 15.0, 17.0]),
        vehicle_capacity=35.0,
        vehicle_fixed_cost=0.2,
    )
    assert inst.depot_capacity.sum() == inst.total_demand()
    res = exact.solve_exact(inst, seconds=30, strategy="subsets", warm_start=False)
    assert res.proven_optimal
    assert res.objective == pytest.approx(brute_force(inst), rel=1e-9)


def test_depot_set_statuses_decide_what_is_proven(monkeypatch):
    # each set's MIP stopped by the time limit with a bound (no solution): not proven, and the
    # bound is the best of what the open sets could still reach; "Infeasible" and "Objective
    # bound" (nothing better than the incumbent) close a set
    inst = three_depots(5, 0)
    model = build_model(inst)
    incumbent = CLRPSolution([Route(2, (c,)) for c in range(5)])
    best_cost = incumbent.cost(inst).total
    for statuses, proven in (
        (["Infeasible", "Objective bound"], True),
        (["Time limit reached", "Objective bound"], False),
    ):
        calls = []

        def fake(h, time_limit, statuses=statuses, calls=calls):
            status = statuses[min(len(calls), len(statuses) - 1)]
            calls.append(status)
            return status, math.inf, best_cost - 0.25, None

        monkeypatch.setattr(exact, "_run", fake)
        h = exact._highs(model, 1, False)
        best, bound, done = exact._subsets(h, model, inst, incumbent, None, lambda: 10.0)
        assert best is incumbent and done is proven and len(calls) >= 2
        assert bound == pytest.approx(best_cost if proven else best_cost - 0.25)


def test_an_lp_bound_stopped_early_does_not_close_a_set(monkeypatch):
    # a set whose LP bound did not finish (status neither Optimal nor Infeasible) gets the
    # bound -inf: it is still solved, so a poor incumbent is improved to the optimum
    inst = three_depots(5, 1)
    model = build_model(inst)
    h = exact._highs(model, 1, False)
    lp_phase = []
    change = h.changeColsIntegrality
    status = h.getModelStatus

    def integrality(n, cols, kinds):
        lp_phase[:] = [all(k == highspy.HighsVarType.kContinuous for k in kinds)]
        return change(n, cols, kinds)

    def model_status():
        if lp_phase and lp_phase[0]:
            return highspy.HighsModelStatus.kTimeLimit
        return status()

    h.changeColsIntegrality = integrality
    h.getModelStatus = model_status
    poor = CLRPSolution([Route(2, (c,)) for c in range(5)])
    best, bound, proven = exact._subsets(h, model, inst, poor, None, lambda: 10.0)
    assert lp_phase == [False]  # guard: the LP phase was seen and ended
    assert best.cost(inst).total == pytest.approx(brute_force(inst))
    assert proven is True


def test_a_customer_cycle_in_the_columns_shows_as_an_invalid_route():
    """Column values with a customer-only cycle behind a depot (what the flow rows exclude)
    do not decode to a valid-looking solution: the route repeats the cycle's first customer,
    so the solution's check rejects it (the exact solver's "bug in the model" error)."""
    from instances import random_instance

    instance = random_instance(2, seed=0, num_depots=1)
    model = build_model(instance)
    col = np.zeros(len(model.cost))
    pos = {uv: a for a, uv in enumerate(model.arcs)}
    for arc in [(0, 1), (1, 2), (2, 1)]:  # depot 0 -> customer 0 -> customer 1 -> customer 0
        col[model.x[pos[arc]]] = 1
    solution = extract_solution(model, col)
    assert [(r.depot, r.customers) for r in solution.routes] == [(0, (0, 1, 0))]
    with pytest.raises(ValueError, match="served more than once"):
        solution.check(instance)
