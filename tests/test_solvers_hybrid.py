"""The hybrid solver: learned starts then refinement, within its budget, never worse than its
best start."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
from instances import random_instance

import clrp_rl4co.search.learned_starts as decoding
from clrp_rl4co.policies import load_policy
from clrp_rl4co.search import decode_plan
from clrp_rl4co.search.learned_starts import LearnedStarts, learned_starts
from clrp_rl4co.solvers import hybrid
from clrp_rl4co.solvers.hybrid import solve_hybrid


@pytest.fixture(scope="module")
def policy():
    return load_policy("drlhq_clrp20").eval()


def served_once(instance, solution) -> bool:
    served = sorted(c for r in solution.routes for c in r.customers)
    return served == list(range(instance.num_customers))


def route_cost(instance, solution) -> float:
    """The objective from its definition: opening costs of the open depots, one vehicle cost
    per route, Euclidean route lengths (these instances have real costs)."""
    total = sum(instance.opening_cost[d] for d in solution.open_depots)
    for r in solution.routes:
        total += instance.vehicle_fixed_cost
        points = [instance.depot_locs[r.depot]]
        points += [instance.customer_locs[c] for c in r.customers]
        points.append(instance.depot_locs[r.depot])
        total += sum(float(np.hypot(*(b - a))) for a, b in zip(points[:-1], points[1:]))
    return total


@pytest.mark.parametrize("seed", [0, 1])
def test_never_worse_than_its_best_start_and_within_budget(policy, seed):
    instance = random_instance(20, seed=seed)
    began = time.perf_counter()
    result = solve_hybrid(instance, policy, seconds=1.5, seed=seed)
    elapsed = time.perf_counter() - began
    assert elapsed < 1.5 + 1.0
    assert result.solver == "hybrid" and result.solution is not None
    result.solution.check(instance)
    assert served_once(instance, result.solution)
    assert result.objective == pytest.approx(route_cost(instance, result.solution), rel=1e-9)
    assert result.start_objective is not None
    assert result.objective <= result.start_objective + 1e-9
    assert result.decode == "x8" and result.starts >= 1


def test_start_objective_is_the_best_decoded_solution(policy):
    """The best learned start equals the x8 decode's best (as the package decodes it)."""
    from clrp_rl4co.envs import CLRPEnv
    from clrp_rl4co.models import decode_batch

    instance = random_instance(20, seed=4)
    found = learned_starts(instance, policy, seconds=5.0, count=3, sgbs=False)
    env = CLRPEnv(check_actions=False)
    from clrp_rl4co.data import instances_to_tensordict

    _, parts, _ = decode_batch(
        policy, env, instances_to_tensordict([instance]), "multistart_greedy+aug8"
    )
    assert found.decode == "x8" and found.trajectories == 8 * 20
    assert found.objectives[0] == pytest.approx(float(parts["total"][0]), rel=1e-6)
    assert found.objectives == sorted(found.objectives)
    for solution, objective in zip(found.solutions, found.objectives):
        solution.check(instance)
        assert objective == pytest.approx(route_cost(instance, solution), rel=1e-9)


def test_starts_prefer_distinct_depot_sets(policy):
    instance = random_instance(20, seed=5)
    found = learned_starts(instance, policy, seconds=5.0, count=3, sgbs=False)
    sets = [s.open_depots for s in found.solutions]
    assert len(sets) == 3
    # distinct open-depot sets come first whenever the decoded pool holds that many
    assert len(set(sets)) == len(sets) or len(set(sets)) < 3


def test_large_instances_decode_in_units_within_the_budget(policy, monkeypatch):
    """With a small memory cap, x8 does not fit in one batch: greedy first, then blocks of
    start customers, never past the decode budget by more than one unit's misprediction."""
    monkeypatch.setattr(decode_plan, "PARAMS", replace(decode_plan.PARAMS,
                                                      trajectory_node_limit=25 * 8))  # fmt: skip
    instance = random_instance(20, seed=6)
    began = time.perf_counter()
    found = learned_starts(instance, policy, seconds=3.0, count=2, sgbs=False)
    assert time.perf_counter() - began < 3.0 + 1.0
    assert found.decode.startswith("greedy")
    assert 1 <= found.trajectories <= 1 + 8 * 20
    for solution in found.solutions:
        solution.check(instance)


def test_no_policy_or_no_time_to_decode_is_pyvrp_alone(policy, monkeypatch):
    instance = random_instance(12, seed=7)
    result = solve_hybrid(instance, None, seconds=0.5)
    assert result.decode == "none" and result.start_objective is None
    result.solution.check(instance)
    monkeypatch.setattr(decoding, "predict_decode_seconds", lambda *args: 1e9)
    result = solve_hybrid(instance, policy, seconds=0.5)
    assert result.decode == "none" and result.solution is not None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"seconds": 0}, "seconds: must be positive"),
        ({"starts": 0}, "starts: must be >= 1"),
        ({"start_share": 1.5}, "start_share: must be in"),
    ],
)
def test_bad_arguments_are_named(policy, kwargs, message):
    with pytest.raises(ValueError, match=message):
        solve_hybrid(random_instance(5, seed=0), policy, **{"seconds": 1.0, **kwargs})


def test_sgbs_adds_a_start_when_its_predicted_time_fits(policy, monkeypatch):
    instance = random_instance(8, seed=8)
    plain = learned_starts(instance, policy, seconds=30.0, count=1, sgbs=False)
    monkeypatch.setattr(decode_plan, "PARAMS", replace(decode_plan.PARAMS, sgbs_factor=0.0))
    with_sgbs = learned_starts(instance, policy, seconds=30.0, count=1, sgbs=None)
    assert plain.decode == "x8" and with_sgbs.decode == "x8+sgbs"
    assert with_sgbs.objectives[0] <= plain.objectives[0] + 1e-9
    monkeypatch.setattr(decode_plan, "PARAMS", replace(decode_plan.PARAMS, sgbs_factor=1e9))
    assert learned_starts(instance, policy, seconds=30.0, sgbs=None).decode == "x8"


def test_pyvrp_alone_is_one_more_candidate_and_only_with_classical(policy, monkeypatch):
    """Refinement made a no-op: only the classical candidate can beat the learned starts."""
    from clrp_rl4co.solvers import solve_pyvrp
    from clrp_rl4co.solvers.common import make_result

    instance = random_instance(20, seed=9)
    good = solve_pyvrp(instance, seconds=None, max_iterations=2000, seed=0).solution
    calls = []

    def classical(inst, seconds, seed):
        calls.append(seconds)
        return make_result(inst, good, solver="pyvrp", runtime=0.0)

    monkeypatch.setattr(hybrid, "refine_solution", lambda inst, solution, **kwargs: solution)
    monkeypatch.setattr(hybrid, "solve_pyvrp", classical)
    with_classical = solve_hybrid(instance, policy, seconds=3.0, sgbs=False)
    assert route_cost(instance, good) < with_classical.start_objective - 1e-6  # a real gain
    assert len(calls) == 1 and 0 < calls[0] < 3.0
    assert with_classical.objective == pytest.approx(route_cost(instance, good), rel=1e-9)
    calls.clear()
    without = solve_hybrid(instance, policy, seconds=3.0, sgbs=False, classical=False)
    assert calls == [] and without.objective == pytest.approx(without.start_objective)


def test_recombined_rollouts_become_the_first_start():
    """Two rollouts, each good on one side: their recombination leads the starts and takes
    the place of one start with its depot set; no gain leaves the starts as they were."""
    from test_solvers_recombine import objective, two_sides

    from clrp_rl4co.data import CLRPSolution, Route

    instance = two_sides()
    a = CLRPSolution([Route(0, (0, 1)), Route(1, (2,)), Route(1, (3,))])
    b = CLRPSolution([Route(0, (0,)), Route(0, (1,)), Route(1, (3, 2))])
    lone = CLRPSolution([Route(1, (0, 1)), Route(1, (2, 3))])  # another depot set
    costs = [objective(instance, s.routes) for s in (a, b, lone)]
    found = LearnedStarts(
        solutions=[a, b, lone], objectives=costs, decode="x8", rollouts=[a, b, lone]
    )
    hybrid._recombine_starts(instance, found, seconds=5.0)
    combined = objective(instance, [Route(0, (0, 1)), Route(1, (3, 2))])
    assert found.decode == "x8+recombined"
    assert found.objectives[0] == pytest.approx(combined, rel=1e-12) and combined < min(costs)
    assert len(found.solutions) == 3 and found.solutions[2] is lone  # a or b gave way
    assert found.objectives == [s.cost(instance).total for s in found.solutions]
    unchanged = LearnedStarts(solutions=[a], objectives=costs[:1], decode="x8", rollouts=[a])
    hybrid._recombine_starts(instance, unchanged, seconds=5.0)
    assert unchanged.decode == "x8" and unchanged.solutions == [a]


def test_recombination_inside_the_hybrid_keeps_its_promises(policy):
    instance = random_instance(20, seed=3)
    began = time.perf_counter()
    result = solve_hybrid(instance, policy, seconds=2.0, sgbs=False, recombine_share=0.2)
    assert time.perf_counter() - began < 2.0 + 1.0
    result.solution.check(instance)
    assert result.decode.startswith("x8")
    assert result.objective == pytest.approx(route_cost(instance, result.solution), rel=1e-9)
    assert result.objective <= result.start_objective + 1e-9
    with pytest.raises(ValueError, match="recombine_share: must be in"):
        solve_hybrid(instance, policy, seconds=1.0, recombine_share=-0.1)
