"""The hybrid's bookkeeping without a policy or PyVRP: how the budget is shared among the
candidates, which decoded solutions are kept as starts, and how rollouts of permuted
start-customer blocks map back to the instance's customers. Decoding, refinement and PyVRP
are fakes that record what they are given and spend their seconds on a fake clock, so every
expected value is exact (computed by hand from the documented shares)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route
from clrp_rl4co.solvers import hybrid
from clrp_rl4co.solvers.hybrid import (
    END_MARGIN,
    END_SHARE,
    FIRST_UNIT_SHARE,
    LearnedStarts,
    learned_starts,
    solve_hybrid,
)


class FakeClock:
    """A wall clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def corner() -> CLRPInstance:
    """Depot 0 at the origin beside customers 0 (0, 1) and 1 (1, 0); depot 1 at (10, 0) and
    depot 2 at (0, 20) far from both; unit demands, vehicles of 2, route fee 10, opening 1."""
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 20.0]]),
        customer_locs=np.array([[0.0, 1.0], [1.0, 0.0]]),
        depot_capacity=np.full(3, 10.0),
        opening_cost=np.ones(3),
        demand=np.ones(2),
        vehicle_capacity=2.0,
        vehicle_fixed_cost=10.0,
        name="corner",
    )


# Solutions of ``corner`` and their costs by hand (opening 1 + fee 10 per route + length).
S1 = CLRPSolution([Route(0, (0, 1))])  # 1 + 10 + (1 + sqrt 2 + 1)
S2 = CLRPSolution([Route(0, (0,)), Route(0, (1,))])  # 1 + 20 + 4
S3 = CLRPSolution([Route(1, (0, 1))])  # 1 + 10 + (sqrt 101 + sqrt 2 + 9)
S5 = CLRPSolution([Route(2, (0, 1))])  # 1 + 10 + (19 + sqrt 2 + sqrt 401)
COST = {
    "S1": 11 + 2 + math.sqrt(2),
    "S2": 25.0,
    "S3": 11 + math.sqrt(101) + math.sqrt(2) + 9,
    "S5": 11 + 19 + math.sqrt(2) + math.sqrt(401),
}


def test_hand_costs():
    for name, solution in {"S1": S1, "S2": S2, "S3": S3, "S5": S5}.items():
        assert solution.cost(corner()).total == pytest.approx(COST[name], rel=1e-12)
    assert COST["S1"] < COST["S2"] < COST["S3"] < COST["S5"]


# ---------------------------------------------------------------------------- budget sharing
@pytest.fixture
def fakes(monkeypatch):
    """Decoding, refinement and PyVRP alone replaced by recorders on a fake clock; decoding
    spends its whole budget and finds S2, S3, S5; each run spends exactly its seconds."""
    clock, calls = FakeClock(), []

    def decode(instance, policy, seconds, seed, count, sgbs, on_unit=None,
               first_seconds=None, clock=None):  # fmt: skip
        calls.append(("decode", seconds, first_seconds, count))
        clock.now += seconds
        starts = [S2, S3, S5]
        return LearnedStarts(
            solutions=starts,
            objectives=[s.cost(instance).total for s in starts],
            decode="x8",
            rollouts=starts,
        )

    def refine(instance, solution, seconds, seed):
        calls.append(("refine", seconds, seed, solution))
        clock.now += seconds
        return S1 if solution is S3 else solution  # the second start refines to the best

    class Alone:
        solution = None

    def alone(instance, seconds, seed):
        calls.append(("pyvrp", seconds, seed))
        clock.now += seconds
        return Alone()

    monkeypatch.setattr(hybrid, "learned_starts", decode)
    monkeypatch.setattr(hybrid, "refine_solution", refine)
    monkeypatch.setattr(hybrid, "solve_pyvrp", alone)
    return clock, calls


def test_each_candidate_gets_an_equal_part_of_the_explore_share_and_the_last_run_the_rest(
    fakes,
):
    """100 s: decoding gets 30 s (its first unit up to 50 s); the deadline is at 99.95 s, so
    69.95 s are left; half of them go to 3 starts + PyVRP alone, 8.74375 s each; the best (S1,
    from start 2) is refined for the rest: 99.95 - 64.975 - the 2 s kept for overruns."""
    clock, calls = fakes
    assert (END_MARGIN, END_SHARE, FIRST_UNIT_SHARE) == (0.05, 0.02, 0.5)
    result = solve_hybrid(corner(), object(), seconds=100.0, seed=7, clock=clock)
    each = (100.0 - 0.05 - 30.0) * 0.5 / 4
    assert calls[0] == ("decode", 30.0, 50.0, 3)
    assert calls[1:4] == [
        ("refine", pytest.approx(each), 7, S2),
        ("refine", pytest.approx(each), 8, S3),
        ("refine", pytest.approx(each), 9, S5),
    ]
    assert calls[4] == ("pyvrp", pytest.approx(each), 10)
    assert calls[5] == ("refine", pytest.approx(99.95 - (30.0 + 4 * each) - 2.0), 11, S1)
    assert len(calls) == 6
    assert result.solution is S1 and result.objective == pytest.approx(COST["S1"])
    assert result.start_objective == pytest.approx(COST["S2"]) and result.starts == 3


def test_without_classical_the_starts_share_the_explore_part(fakes):
    clock, calls = fakes
    solve_hybrid(corner(), object(), seconds=10.0, start_share=0.2, explore_share=0.6,
                 classical=False, clock=clock)  # fmt: skip
    each = (10.0 - 0.05 - 2.0) * 0.6 / 3
    assert calls[0] == ("decode", 2.0, 5.0, 3)
    assert [c[:2] for c in calls[1:4]] == [("refine", pytest.approx(each))] * 3
    last = 9.95 - (2.0 + 3 * each) - 0.2
    assert calls[4][:3] == ("refine", pytest.approx(last), 3) and len(calls) == 5


def test_a_refinement_that_overruns_shortens_the_next_ones(fakes, monkeypatch):
    """A refinement 3 s past its seconds raises the time kept free for overruns before the
    deadline from 2 s (2% of the budget) to 3 s (the largest overrun seen)."""
    clock, calls = fakes
    refine = hybrid.refine_solution

    def late(instance, solution, seconds, seed):
        found = refine(instance, solution, seconds, seed)
        clock.now += 3.0 if seed == 0 else 0.0
        return found

    monkeypatch.setattr(hybrid, "refine_solution", late)
    solve_hybrid(corner(), object(), seconds=100.0, clock=clock)
    each = 69.95 * 0.5 / 4
    spent = 30.0 + 4 * each + 3.0
    assert calls[-1][:3] == ("refine", pytest.approx(99.95 - spent - 3.0), 4)


def test_no_start_is_pyvrp_alone_on_the_whole_budget(monkeypatch):
    clock, calls = FakeClock(), []
    monkeypatch.setattr(hybrid, "learned_starts", lambda *a, **k: LearnedStarts())

    def alone(instance, seconds, seed):
        calls.append(seconds)
        return hybrid.make_result(instance, S1, solver="pyvrp", runtime=seconds)

    monkeypatch.setattr(hybrid, "solve_pyvrp", alone)
    result = solve_hybrid(corner(), object(), seconds=10.0, clock=clock)
    assert calls == [pytest.approx(10.0 * 0.98 - 0.05)]  # solver_budget(10 s)
    assert result.decode == "none" and result.solver == "hybrid"


# ------------------------------------------------------------------------ which starts are kept
def fake_rollouts(rows: list[CLRPSolution], num_depots: int):
    """A ``_rollouts`` returning ``rows`` (as padded action rows) and their exact costs."""

    def rollouts(policy, env, instance, augment, starts):
        actions = [s.to_actions(num_depots) for s in rows]
        width = max(len(a) for a in actions)
        padded = np.array([a + [a[-1]] * (width - len(a)) for a in actions])
        return padded, np.array([s.cost(instance).total for s in rows])

    return rollouts


@pytest.mark.parametrize(
    "rows, count, kept",
    [
        ([S1, S2, S3, S5], 3, [S1, S3, S5]),  # a new depot set before a better solution
        ([S5, S2, S1, S3], 3, [S1, S3, S5]),  # whatever the decoding order
        ([S1, S2, S3, S5], 2, [S1, S3]),
        ([S1, S2, S3], 3, [S1, S2, S3]),  # only two sets: the next best fills the last place
        ([S1, S2], 3, [S1, S2]),
    ],
)
def test_the_kept_starts_differ_in_their_open_depot_sets_first(monkeypatch, rows, count, kept):
    monkeypatch.setattr(hybrid, "_rollouts", fake_rollouts(rows, 3))
    found = learned_starts(corner(), None, seconds=100.0, count=count, sgbs=False, env="unused",
                           clock=FakeClock())  # fmt: skip
    assert found.decode == "x8" and found.trajectories == 8 * 2
    assert found.solutions == kept
    assert found.objectives == [s.cost(corner()).total for s in kept]
    assert sorted(found.rollouts, key=lambda s: s.cost(corner()).total) == found.rollouts
    assert len(found.rollouts) == len(rows)


# ------------------------------------------------------------------ permuted blocks map back
def ring(num_customers: int, seed: int) -> CLRPInstance:
    rng = np.random.default_rng(seed)
    return CLRPInstance(
        depot_locs=rng.random((2, 2)) * 100,
        customer_locs=rng.random((num_customers, 2)) * 100,
        depot_capacity=np.full(2, float(num_customers)),
        opening_cost=np.ones(2),
        demand=np.ones(num_customers),
        vehicle_capacity=float(num_customers),
        vehicle_fixed_cost=1.0,
        name="ring",
    )


def test_rollouts_of_permuted_start_blocks_map_back_to_the_instance_customers(monkeypatch):
    """Large instances decode blocks of start customers on a copy whose customers are
    reordered. A fake decoder serves, from depot 0 in one route, the decoded copy's customers
    in its own order starting at each start customer; it records the locations it visited.
    Every rollout kept must visit the same locations in the same order in the instance."""
    instance = ring(9, seed=3)
    visited: dict[tuple[tuple[float, float], ...], float] = {}

    def rollouts(policy, env, decoded, augment, starts):
        rows, costs = [], []
        n = decoded.num_customers
        for k in range(max(1, starts)):
            order = [(k + j) % n for j in range(n)]
            cost = CLRPSolution([Route(0, tuple(order))]).cost(decoded).total
            visited[tuple(map(tuple, decoded.customer_locs[order]))] = cost
            rows.append([0, *(2 + c for c in order), 0])
            costs.append(cost)
        return np.array(rows), np.array(costs)

    monkeypatch.setattr(hybrid, "_rollouts", rollouts)
    monkeypatch.setattr(hybrid, "TRAJECTORY_NODE_LIMIT", 11 * 8)  # 8 rollouts a unit
    found = learned_starts(instance, None, seconds=1e6, count=2, sgbs=False, env="unused",
                           clock=FakeClock())  # fmt: skip
    assert found.decode == "greedy+ms72"  # 1 greedy + 8 transforms x 9 start customers
    assert len(found.rollouts) > 9  # more than the rotations of one order
    for solution in found.rollouts:
        (route,) = solution.routes
        locations = tuple(map(tuple, instance.customer_locs[list(route.customers)]))
        assert solution.cost(instance).total == pytest.approx(visited[locations], rel=1e-12)
