"""The hybrid's bookkeeping without a policy or PyVRP: how the budget is shared among the
candidates (:mod:`clrp_rl4co.solvers.hybrid`), which decoded solutions are kept as starts and
how rollouts of permuted start-customer blocks map back to the instance's customers (the
decoding within a budget, :mod:`clrp_rl4co.search`). Decoding, refinement and PyVRP
are fakes that record what they are given and spend their seconds on a fake clock, so every
expected value is exact (computed by hand from the documented shares)."""

from __future__ import annotations

import logging
import math
import re
from dataclasses import replace

import numpy as np
import pytest
from clocks import FakeClock

import clrp_rl4co.search.learned_starts as decoding
from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route, tensordict_to_instances
from clrp_rl4co.search import decode_plan, rollout_pool
from clrp_rl4co.search.learned_starts import LearnedStarts, learned_starts
from clrp_rl4co.solvers import hybrid, progress
from clrp_rl4co.solvers.hybrid import solve_hybrid


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


def decode_params(monkeypatch, **changes) -> None:
    """The decoding's parameters (:data:`clrp_rl4co.search.decode_plan.PARAMS`) changed."""
    monkeypatch.setattr(decode_plan, "PARAMS", replace(decode_plan.PARAMS, **changes))


def hybrid_params(monkeypatch, **changes) -> None:
    """The hybrid's parameters (:data:`clrp_rl4co.solvers.hybrid.PARAMS`) changed."""
    monkeypatch.setattr(hybrid, "PARAMS", replace(hybrid.PARAMS, **changes))


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
        DECODED.update(policy=policy, seed=seed, sgbs=sgbs, on_unit=on_unit, clock=clock)
        clock.now += seconds
        on_unit("decode")
        starts = [S2, S3, S5][:count]
        return LearnedStarts(
            solutions=starts,
            objectives=[s.cost(instance).total for s in starts],
            decode="x8",
            seconds=seconds,
            rollouts=starts,
        )

    def refine(instance, solution, seconds, seed):
        calls.append(("refine", seconds, seed, solution))
        clock.now += seconds
        return S1 if solution is S3 else solution  # the second start refines to the best

    def alone(instance, seconds, seed):  # finds nothing
        calls.append(("pyvrp", seconds, seed))
        clock.now += seconds
        return hybrid.make_result(instance, None, solver="pyvrp", runtime=seconds)

    def route(instance, depots, seconds, seed, initial, scaled_history):
        calls.append(("route", seconds, seed, tuple(depots), initial, scaled_history))
        assert instance.name == "corner"
        clock.now += seconds
        return S2  # costlier than the best found before: not kept

    monkeypatch.setattr(hybrid, "learned_starts", decode)
    monkeypatch.setattr(hybrid, "refine_solution", refine)
    monkeypatch.setattr(hybrid, "route_on_set", route)
    monkeypatch.setattr(hybrid, "solve_pyvrp", alone)
    monkeypatch.setattr(hybrid, "ProgressBar", RecordingBar)
    monkeypatch.setattr(hybrid, "_recombine_starts", recombine)
    DECODED.clear()
    BARS.clear()
    RECOMBINED.clear()
    return clock, calls


DECODED: dict = {}
BARS: list = []
RECOMBINED: list = []


class RecordingBar:
    """A ``ProgressBar`` that records how it was made and its phases."""

    def __init__(self, enabled, seconds, name, clock):
        self.enabled, self.seconds, self.name, self.clock = enabled, seconds, name, clock
        self.phases: list[str] = []
        self.closed = False
        BARS.append(self)

    def update(self, phase):
        self.phases.append(phase)

    def close(self):
        self.closed = True


def recombine(instance, found, seconds):
    RECOMBINED.append((instance.name, len(found.rollouts), seconds))


def test_each_candidate_gets_an_equal_part_of_the_explore_share_and_the_last_run_the_rest(
    fakes,
):
    """100 s: decoding gets 30 s (its first unit up to 50 s); the deadline is at 99.95 s, so
    69.95 s are left; half of them go to 3 starts + PyVRP alone, 8.74375 s each; the best (S1,
    from start 2) is refined for the rest: 99.95 - 64.975 - the 2 s kept for overruns."""
    clock, calls = fakes
    params = hybrid.PARAMS
    assert (params.end_margin, params.end_share, params.first_unit_share) == (0.05, 0.02, 0.5)
    result = solve_hybrid(corner(), Policy(), seconds=100.0, seed=7, clock=clock)
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
    assert result.solver == "hybrid" and result.status == "feasible" and result.name == "corner"
    assert result.runtime == pytest.approx(99.95 - 2.0)  # on the clock: all but the reserve
    assert (result.decode, result.decode_seconds) == ("x8", 30.0)
    assert DECODED["seed"] == 7 and DECODED["sgbs"] is None and DECODED["clock"] is clock
    assert isinstance(DECODED["policy"], Policy)
    (bar,) = BARS
    assert (bar.enabled, bar.seconds, bar.name, bar.clock) == (False, 100.0, "corner", clock)
    assert bar.phases == ["decode", "refine start 1", "refine start 2", "refine start 3",
                          "pyvrp alone", "done"]  # fmt: skip
    assert bar.closed and DECODED["on_unit"] == bar.update and RECOMBINED == []


class Policy:
    """Stands for a policy (the fakes never call it)."""


def test_a_large_instance_decodes_a_tenth_then_gives_pyvrp_alone_the_explore_share(
    fakes, monkeypatch
):
    """From LARGE_INSTANCE customers (2 here) a start refined by parts keeps its depots and
    assignment, so: decoding gets 10 s of 100 (its first unit too), PyVRP alone
    half of the 89.95 s left, the best (S2, the best start: PyVRP alone finds nothing here)
    the rest but the 2 s reserve; no start is refined on its own."""
    clock, calls = fakes
    monkeypatch.setattr(hybrid, "LARGE_INSTANCE", 2)
    assert corner().num_customers == 2 and hybrid.PARAMS.large_start_share == 0.1
    result = solve_hybrid(corner(), Policy(), seconds=100.0, seed=7, clock=clock)
    alone = (100.0 - 0.05 - 10.0) * 0.5
    assert calls[0] == ("decode", 10.0, 10.0, 3)
    assert calls[1] == ("pyvrp", pytest.approx(alone), 10)
    assert calls[2] == ("refine", pytest.approx(99.95 - 10.0 - alone - 2.0), 11, S2)
    assert len(calls) == 3 and result.solution is S2
    assert BARS[0].phases == ["decode", "pyvrp alone", "done"]
    calls.clear()
    solve_hybrid(corner(), Policy(), seconds=1.0, seed=7, clock=clock)  # 0.85 s left
    assert calls[1] == ("pyvrp", pytest.approx((1.0 - 0.05 - 0.1) * 0.5), 10)
    monkeypatch.setattr(hybrid, "LARGE_INSTANCE", corner().num_customers + 1)
    calls.clear()
    solve_hybrid(corner(), Policy(), seconds=100.0, seed=7, clock=clock)
    assert calls[0] == ("decode", 30.0, 50.0, 3)  # below it: the usual shares


def test_from_final_routing_customers_the_best_is_routed_on_its_own_depots(fakes, monkeypatch):
    """From FINAL_ROUTING_CUSTOMERS customers (2 here) the last phase is one route_on_set on
    the best solution's depots (S1: depot 0), warm-started from it, with the history of its
    budget, for what the refinement would have had; a worse result leaves S1 the answer."""
    clock, calls = fakes
    assert hybrid.PARAMS.final_routing_customers == 300
    hybrid_params(monkeypatch, final_routing_customers=2)
    result = solve_hybrid(corner(), Policy(), seconds=100.0, seed=7, clock=clock)
    each = (100.0 - 0.05 - 30.0) * 0.5 / 4
    assert [c[0] for c in calls[:5]] == ["decode", "refine", "refine", "refine", "pyvrp"]
    last = 99.95 - (30.0 + 4 * each) - 2.0
    assert calls[5] == ("route", pytest.approx(last), 11, (0,), S1, True) and len(calls) == 6
    assert result.solution is S1
    monkeypatch.setattr(hybrid, "LARGE_INSTANCE", 2)  # routed by parts: the refinement again
    calls.clear()
    solve_hybrid(corner(), Policy(), seconds=100.0, seed=7, clock=clock)
    assert [c[0] for c in calls] == ["decode", "pyvrp", "refine"]


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


def test_a_callers_deadline_is_the_budget_on_its_own_clock(monkeypatch):
    """The caller's call began 4 s ago with 10 s: the hybrid has the 6 s left, on the
    deadline's clock (not the default wall clock)."""
    from clrp_rl4co.solvers.stopping import Deadline

    clock, calls, decoded = FakeClock(), [], []

    def no_starts(instance, policy, seconds, *args, **kwargs):
        decoded.append((seconds, kwargs["clock"]))
        return LearnedStarts()

    def alone(instance, seconds, seed):
        calls.append(seconds)
        return hybrid.make_result(instance, S1, solver="pyvrp", runtime=seconds)

    monkeypatch.setattr(hybrid, "learned_starts", no_starts)
    monkeypatch.setattr(hybrid, "solve_pyvrp", alone)
    solve_hybrid(corner(), object(), seconds=Deadline(10.0, clock, start=clock.now - 4.0))
    assert decoded == [(pytest.approx(6.0 * 0.3), clock)]  # start_share of the 6 s left
    assert calls == [pytest.approx(6.0 * 0.98 - 0.05)]  # solver_budget(6 s)
    clock.now += 100.0  # a spent deadline still leaves the hybrid its floor of 1 ms
    solve_hybrid(corner(), object(), seconds=Deadline(10.0, clock, start=clock.now - 20.0))
    assert decoded[-1][0] == pytest.approx(1e-3 * 0.3)


# ------------------------------------------------------------------------ which starts are kept
def fake_rollouts(rows: list[CLRPSolution], num_depots: int):
    """A ``learned_starts._rollouts`` returning ``rows`` (as padded action rows) and their
    exact costs on the instance of the env input it is given."""

    def rollouts(policy, env, td, augment, starts):
        (instance,) = tensordict_to_instances(td)
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
    monkeypatch.setattr(decoding, "_rollouts", fake_rollouts(rows, 3))
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
        depot_capacity=np.full(2, float(num_customers * (num_customers + 1) / 2)),
        opening_cost=np.ones(2),
        demand=np.arange(1.0, num_customers + 1),
        vehicle_capacity=float(num_customers * (num_customers + 1) / 2),
        vehicle_fixed_cost=1.0,
        rounded_costs=True,  # decoded copies must keep the cost convention
        name="ring",
    )


@pytest.mark.parametrize("per_unit", [8, 9])
def test_rollouts_of_permuted_start_blocks_map_back_to_the_instance_customers(
    monkeypatch, per_unit
):
    """Large instances decode blocks of start customers on a copy whose customers are
    reordered. A fake decoder serves, from depot 0 in one route, the decoded copy's customers
    in its own order starting at each start customer; it records the locations it visited.
    Every rollout kept must visit the same locations (and demands) in the same order in the
    instance."""
    instance = ring(9, seed=3)
    visited: dict[tuple[tuple[float, float], ...], float] = {}

    decodes = []

    def rollouts(policy, env, td, augment, starts):
        (decoded,) = tensordict_to_instances(td)  # the env input the unit decodes
        decodes.append((policy, env, augment, starts, decoded.customer_locs.copy()))
        rows, costs = [], []
        n = decoded.num_customers
        for k in range(max(1, starts)):
            order = [(k + j) % n for j in range(n)]
            cost = CLRPSolution([Route(0, tuple(order))]).cost(decoded).total
            seen = np.column_stack([decoded.customer_locs[order], decoded.demand[order]])
            visited[tuple(map(tuple, seen))] = cost
            rows.append([0, *(2 + c for c in order), 0])
            costs.append(cost)
        return np.array(rows), np.array(costs)

    monkeypatch.setattr(decoding, "_rollouts", rollouts)
    decode_params(monkeypatch, trajectory_node_limit=11 * per_unit)  # rollouts a unit
    policy = Policy()
    found = learned_starts(instance, policy, seconds=1e6, count=2, sgbs=False, env="env",
                           clock=FakeClock())  # fmt: skip
    assert found.decode == "greedy+ms72"  # 1 greedy + 8 transforms x 9 start customers
    blocks = [0] + [8, 1] * 8 if per_unit == 8 else [0] + [9] * 8
    assert [d[3] for d in decodes] == blocks
    per_transform = 2 if per_unit == 8 else 1
    transforms = [None] + [None if k == 0 else [k] for k in range(8) for _ in range(per_transform)]
    assert [d[2] for d in decodes] == transforms
    assert all(d[0] is policy and d[1] == "env" for d in decodes)
    plan = decode_plan.plan_units(instance, 0, seconds=1e6)  # the default seed is 0
    for (_, starts, order), d in zip(plan, decodes):
        if starts not in (0, 9):  # a block of starts: its customers first
            assert np.array_equal(d[4], instance.customer_locs[order])
        else:  # greedy or all customers as starts: the instance as it is
            assert np.array_equal(d[4], instance.customer_locs)
    assert len(found.rollouts) > 9 or per_unit == 9  # more than the rotations of one order
    for solution in found.rollouts:
        (route,) = solution.routes
        customers = list(route.customers)
        seen = np.column_stack([instance.customer_locs[customers], instance.demand[customers]])
        locations = tuple(map(tuple, seen))
        assert solution.cost(instance).total == pytest.approx(visited[locations], rel=1e-12)


# ------------------------------------------------------------------------- the decode plan
def test_the_prior_and_the_solver_budget_by_hand():
    # 2.2 N steps x (1.5e-3 + 7e-8 x trajectories x nodes): 220 x (0.0015 + 0.00616)
    assert decode_plan.predict_decode_seconds(100, 10, 800) == pytest.approx(1.6852, rel=1e-12)
    assert hybrid.solver_budget(10.0) == pytest.approx(9.75, rel=1e-12)  # 10 x 0.98 - 0.05
    assert hybrid.solver_budget(0.01) == 1e-3  # never below 1 ms


def test_x8_is_one_unit_when_it_fits_in_memory_and_time(monkeypatch):
    instance = ring(9, seed=0)
    ((transforms, starts, order),) = decode_plan.plan_units(instance, 0, seconds=1e6)
    assert transforms == list(range(8)) and starts == 9
    assert order.tolist() == list(range(9))
    decode_params(monkeypatch, trajectory_node_limit=11 * 72)  # x8 just fits: 72 rows
    assert len(decode_plan.plan_units(instance, 0, seconds=1e6)) == 1
    x8_prior = decode_plan.predict_decode_seconds(9, 2, 72)
    assert len(decode_plan.plan_units(instance, 0, seconds=x8_prior)) == 1
    assert len(decode_plan.plan_units(instance, 0, seconds=x8_prior * 0.999)) > 1  # not in time


@pytest.mark.parametrize("seed", [0, 5])
def test_large_instances_decode_greedy_then_growing_blocks_per_transform(monkeypatch, seed):
    """40 customers, 2 depots, at most 100 rollouts a unit: greedy, then per transform the
    blocks 16 and 24 (16 x 4 = 64 capped by the 24 customers left) of a seeded order."""
    instance = ring(40, seed=1)
    decode_params(monkeypatch, trajectory_node_limit=42 * 100)
    units = decode_plan.plan_units(instance, seed, seconds=1e6)
    assert units[0][:2] == (None, 0) and units[0][2].tolist() == list(range(40))
    assert [(t, s) for t, s, _ in units[1:]] == [
        (None if k == 0 else [k], size) for k in range(8) for size in (16, 24)
    ]
    rng = np.random.default_rng(seed)
    for k in range(8):
        order = rng.permutation(40)
        first, second = units[1 + 2 * k][2], units[2 + 2 * k][2]
        assert first.tolist() == order.tolist()  # its first 16 customers are the starts
        assert second.tolist() == [*order[16:], *order[:16]]  # the next 24 come first
    decode_params(monkeypatch, trajectory_node_limit=42 * 10)  # blocks capped at 10
    sizes = [s for _, s, _ in decode_plan.plan_units(instance, seed, seconds=1e6)[1:3]]
    assert sizes == [10, 10]


def test_a_unit_runs_only_when_its_predicted_time_fits(monkeypatch):
    """Decoding takes exactly the prior's time here, so the prediction for later units is 1.5x
    the prior (the safety factor). The greedy rollout fits only in ``first_seconds``; with a
    budget too small for it nothing is decoded."""
    instance = ring(9, seed=2)
    clock = FakeClock()
    decode_params(monkeypatch, trajectory_node_limit=11 * 8)

    def rollouts(policy, env, decoded, augment, starts):
        rows = max(1, starts) * (len(augment) if augment else 1)
        clock.now += decode_plan.predict_decode_seconds(9, 2, rows)
        row = [0, *range(2, 11), 0]
        return np.array([row] * rows), np.full(rows, 1.0)

    monkeypatch.setattr(decoding, "_rollouts", rollouts)
    greedy = decode_plan.predict_decode_seconds(9, 2, 1)
    block = decode_plan.predict_decode_seconds(9, 2, 8)

    def decode(seconds, first_seconds=None):
        clock.now = 1024.0
        return learned_starts(instance, None, seconds=seconds, count=1, sgbs=False,
                              env="unused", first_seconds=first_seconds, clock=clock)  # fmt: skip

    assert decode(greedy * 0.99).decode == "none"
    assert decode(greedy * 0.99).trajectories == 0 and decode(greedy * 0.99).solutions == []
    found = decode(greedy * 0.99, first_seconds=greedy)
    assert (found.decode, found.trajectories) == ("greedy", 1)
    assert found.seconds == pytest.approx(greedy)
    found = decode((greedy + 1.5 * block) * 1.001)  # greedy, then one block of 8
    assert (found.decode, found.trajectories) == ("greedy+ms8", 9)
    found = decode((greedy + 1.5 * block) * 0.999)
    assert (found.decode, found.trajectories) == ("greedy", 1)


def test_an_invalid_rollout_is_skipped_with_a_warning(monkeypatch, caplog):
    twice = CLRPSolution([Route(0, (0, 1)), Route(0, (0,))])  # customer 0 served twice
    monkeypatch.setattr(decoding, "_rollouts", fake_rollouts([twice, S3], 3))
    with caplog.at_level("WARNING", logger=rollout_pool.__name__):
        found = learned_starts(corner(), None, seconds=100.0, count=2, sgbs=False,
                               env="unused", clock=FakeClock())  # fmt: skip
    assert found.solutions == [S3] and found.rollouts == [S3]
    (record,) = caplog.records
    message = record.getMessage()
    assert message.startswith("corner: a decoded solution is invalid (")
    assert message.endswith("); skipped") and "served" in message  # the reason from check()


def test_the_pool_keeps_the_best_distinct_rollouts():
    pool = rollout_pool.RolloutPool(num_depots=1, keep=2)
    pool.add(np.array([[0, 1, 0], [0, 2, 0], [0, 1, 0]]), np.array([3.0, 1.0, 3.0]), None)
    assert pool.items == [(1.0, (0, 2, 0)), (3.0, (0, 1, 0))]
    pool.add(np.array([[0, 3, 0]]), np.array([2.0]), None)
    assert pool.items == [(1.0, (0, 2, 0)), (2.0, (0, 3, 0))]
    pool.add(np.array([[0, 1, 2, 0]]), np.array([0.5]), np.array([1, 0]))  # decoded reordered
    assert pool.items[0] == (0.5, (0, 2, 1, 0))


def test_the_progress_bar_follows_the_clock():
    clock = FakeClock()
    bar = progress.ProgressBar(True, 10.0, "corner", clock)
    clock.now += 3.04
    bar.update("refine start 1")
    assert bar.bar.n == pytest.approx(3.0) and bar.bar.postfix == "refine start 1"
    assert bar.bar.desc.startswith("corner") and bar.bar.total == 10.0
    clock.now += 25.0
    bar.update("done")
    assert bar.bar.n == pytest.approx(10.0)  # never past the budget
    bar.close()
    silent = progress.ProgressBar(False, 10.0, "corner", clock)
    silent.update("x")
    silent.close()
    assert silent.bar is None


def test_equal_cost_rollouts_keep_their_decoding_order():
    """Among rollouts of equal cost the pool keeps the first decoded (a stable order), and a
    rollout decoded twice is kept once."""
    rows = np.array([[0, 1 + k, 0] for k in range(200)])
    pool = rollout_pool.RolloutPool(num_depots=1, keep=100)
    pool.add(rows, np.array([1.0, 0.5] * 100), None)
    assert [a for _, a in pool.items] == [(0, 2 + 2 * k, 0) for k in range(100)]
    pool = rollout_pool.RolloutPool(num_depots=1, keep=2)
    pool.add(np.array([[0, 2, 0], [0, 1, 0]]), np.array([1.0, 1.0]), None)
    assert pool.items == [(1.0, (0, 2, 0)), (1.0, (0, 1, 0))]
    pool = rollout_pool.RolloutPool(num_depots=1, keep=3)
    for _ in range(2):
        pool.add(np.array([[0, 1, 0]]), np.array([1.0]), None)
    pool.add(np.array([[0, 2, 0]]), np.array([2.0]), None)
    assert pool.items == [(1.0, (0, 1, 0)), (2.0, (0, 2, 0))]


def test_blocks_grow_fourfold_and_a_tiny_memory_cap_still_decodes_one_start_a_unit(monkeypatch):
    instance = ring(100, seed=1)
    decode_params(monkeypatch, trajectory_node_limit=102 * 1000)  # x8 (800) fits in memory
    units = decode_plan.plan_units(instance, 0, seconds=1e-9)  # but not in time
    assert [s for _, s, _ in units[1:4]] == [16, 64, 20]  # 16, 16 x 4, the 20 left
    decode_params(monkeypatch, trajectory_node_limit=5)  # less than one rollout's nodes
    units = decode_plan.plan_units(ring(3, seed=1), 0, seconds=1e6)
    assert [s for _, s, _ in units] == [0] + [1, 1, 1] * 8


def test_defaults_of_the_hybrid(fakes):
    """10 s, 30% decoding (first unit up to 50%), 3 starts, seed 0, no progress bar, no
    recombination."""
    clock, calls = fakes
    solve_hybrid(corner(), Policy(), clock=clock)
    assert calls[0] == ("decode", 3.0, 5.0, 3) and DECODED["seed"] == 0
    assert DECODED["sgbs"] is None  # SGBS when it fits
    solve_hybrid(corner(), Policy(), sgbs=False, clock=clock)
    assert DECODED["sgbs"] is False
    assert BARS[0].enabled is False and RECOMBINED == []


def test_one_candidate_skips_the_explore_phase(fakes):
    """One start and no PyVRP alone: the start is refined once, for everything left."""
    clock, calls = fakes
    result = solve_hybrid(corner(), Policy(), seconds=10.0, starts=1, classical=False,
                          seed=3, clock=clock)  # fmt: skip
    assert calls[0][3] == 1
    assert calls[1:] == [("refine", pytest.approx(9.95 - 3.0 - 0.2), 4, S2)]
    assert result.solution is S2 and BARS[0].phases == ["decode", "done"]
    clock.now, calls[:] = 0.0, []
    solve_hybrid(corner(), Policy(), seconds=10.0, starts=1, clock=clock)  # + PyVRP alone
    assert [c[0] for c in calls] == ["decode", "refine", "pyvrp", "refine"]


def test_small_budgets_are_shared_the_same_way(fakes):
    """1 s: 0.3 s decoding, 0.65 s left, 0.08125 s per candidate, the rest (0.305 s, less
    0.02 s for overruns) to the best."""
    clock, calls = fakes
    solve_hybrid(corner(), Policy(), seconds=1.0, clock=clock)
    each = 0.65 * 0.5 / 4
    assert [c[1] for c in calls[1:5]] == [pytest.approx(each)] * 4
    assert calls[5][1] == pytest.approx(0.65 - 4 * each - 0.02)


def test_progress_and_recombination_are_passed_on(fakes):
    clock, calls = fakes
    solve_hybrid(corner(), Policy(), seconds=100.0, progress=True, recombine_share=0.2,
                 clock=clock)  # fmt: skip
    assert BARS[0].enabled is True
    assert RECOMBINED == [("corner", 3, pytest.approx(20.0))]  # 20% of 100 s
    assert BARS[0].phases[:2] == ["decode", "recombine"]


def test_recombination_gets_at_most_the_time_left(fakes, monkeypatch):
    clock, calls = fakes
    solve_hybrid(corner(), Policy(), seconds=10.0, start_share=0.9, recombine_share=0.5,
                 clock=clock)  # fmt: skip
    assert RECOMBINED == [("corner", 3, pytest.approx(10.0 - 0.05 - 9.0))]
    RECOMBINED.clear()
    solve_hybrid(corner(), Policy(), seconds=10.0, start_share=1.0, recombine_share=0.5,
                 clock=clock)  # fmt: skip
    assert RECOMBINED == []  # the decoding took it all: nothing left to recombine
    solve_hybrid(corner(), Policy(), seconds=10.0, starts=1, recombine_share=0.5, clock=clock)
    assert RECOMBINED == []  # one rollout: nothing to combine
    solve_hybrid(corner(), Policy(), seconds=10.0, starts=2, recombine_share=0.5, clock=clock)
    assert RECOMBINED == [("corner", 2, pytest.approx(5.0))]  # two rollouts: combined


def test_no_policy_or_no_decode_share_is_pyvrp_alone(fakes, monkeypatch, caplog):
    clock, calls = fakes
    found = []

    def alone(instance, seconds, seed):
        calls.append(("pyvrp", seconds, seed))
        clock.now += seconds
        found.append(hybrid.make_result(instance, S3, solver="pyvrp", runtime=seconds))
        return found[-1]

    monkeypatch.setattr(hybrid, "solve_pyvrp", alone)
    with caplog.at_level("INFO", logger="clrp_rl4co.solvers.hybrid"):
        result = solve_hybrid(corner(), None, seconds=10.0, seed=5, clock=clock)
    assert calls == [("pyvrp", pytest.approx(9.75), 5)]  # solver_budget(10 s)
    assert [r.getMessage() for r in caplog.records] == [
        "corner: no learned start fits in the budget; PyVRP alone"
    ]
    assert result.solver == "hybrid" and result.solution is S3 and result.decode == "none"
    assert result.runtime == pytest.approx(9.75) and result.start_objective is None
    assert BARS[0].phases == ["pyvrp"] and BARS[0].closed
    calls.clear()
    solve_hybrid(corner(), Policy(), seconds=10.0, start_share=0.0, clock=clock)
    assert [c[0] for c in calls] == ["pyvrp"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"seconds": 0.0}, "seconds: must be positive, got 0.0"),
        ({"seconds": -1.0}, "seconds: must be positive"),
        ({"starts": 0}, "starts: must be >= 1, got 0"),
        ({"start_share": 1.5}, r"start_share: must be in \[0, 1\], got 1.5"),
        ({"explore_share": -0.5}, "explore_share: must be in"),
        ({"recombine_share": 2.5}, "recombine_share: must be in"),
    ],
)
def test_bad_arguments_are_named(fakes, kwargs, message):
    clock, _ = fakes
    with pytest.raises(ValueError, match=message):
        solve_hybrid(corner(), Policy(), **{"seconds": 1.0, **kwargs}, clock=clock)


def test_the_bounds_of_the_arguments_are_allowed(fakes):
    clock, calls = fakes
    solve_hybrid(corner(), Policy(), seconds=0.5, starts=1, start_share=1.0, explore_share=1.0,
                 recombine_share=1.0, clock=clock)  # fmt: skip
    solve_hybrid(corner(), Policy(), seconds=0.5, start_share=0.0, explore_share=0.0,
                 recombine_share=0.0, clock=clock)  # fmt: skip
    assert calls[0][:2] == ("decode", 0.5)


def test_learned_starts_defaults_and_progress(monkeypatch):
    """Three starts by default, an env that does not re-check actions, one progress call per
    unit."""
    from clrp_rl4co.envs import CLRPEnv

    envs, units = [], []

    def rollouts(policy, env, decoded, augment, starts):
        envs.append(env)
        return fake_rollouts([S1, S2, S3, S5], 3)(policy, env, decoded, augment, starts)

    monkeypatch.setattr(decoding, "_rollouts", rollouts)
    found = learned_starts(corner(), None, seconds=100.0, sgbs=False, on_unit=units.append,
                           clock=FakeClock())  # fmt: skip
    assert found.solutions == [S1, S3, S5] and units == ["decode"]
    (env,) = envs
    assert isinstance(env, CLRPEnv) and env.check_actions is False


def test_only_the_first_unit_may_use_first_seconds_and_a_skipped_unit_is_logged(
    monkeypatch, caplog
):
    instance = ring(9, seed=2)
    clock = FakeClock()
    decode_params(monkeypatch, trajectory_node_limit=11 * 8)

    def rollouts(policy, env, decoded, augment, starts):
        rows = max(1, starts) * (len(augment) if augment else 1)
        clock.now += decode_plan.predict_decode_seconds(9, 2, rows)
        return np.array([[0, *range(2, 11), 0]] * rows), np.full(rows, 1.0)

    monkeypatch.setattr(decoding, "_rollouts", rollouts)
    greedy = decode_plan.predict_decode_seconds(9, 2, 1)
    with caplog.at_level("DEBUG", logger=decoding.__name__):
        found = learned_starts(instance, None, seconds=greedy, count=1, sgbs=False,
                               env="unused", first_seconds=10.0, clock=clock)  # fmt: skip
    assert (found.decode, found.trajectories) == ("greedy", 1)  # the next unit: 0 s left
    predicted = 1.5 * decode_plan.predict_decode_seconds(9, 2, 8)
    message = rf"ring: decode unit of 8 rollouts \({predicted:.2f} s predicted\) does not fit "
    assert re.search(message + r"\(-?0\.00 s left\)", caplog.text)


@pytest.fixture
def sgbs_decode(monkeypatch):
    """x8 decoding that takes 0.5 s on the clock; SGBS (the package's ``decode_batch``)
    replaced by a recorder that returns S1 (and keeps the ``stop`` it was given)."""
    import torch

    import clrp_rl4co.models as models

    clock, calls, stops = FakeClock(), [], []

    def rollouts(policy, env, decoded, augment, starts):
        clock.now += 0.5
        return fake_rollouts([S2, S3], 3)(policy, env, decoded, augment, starts)

    def decode_batch(policy, env, td, spec, stop=None):
        calls.append((policy, env, spec, td["locs"].shape))
        stops.append(stop)
        actions = torch.tensor([S1.to_actions(3)])
        return actions, {"total": torch.tensor([COST["S1"]], dtype=torch.float32)}, None

    monkeypatch.setattr(decoding, "_rollouts", rollouts)
    monkeypatch.setattr(models, "decode_batch", decode_batch)
    decode_params(monkeypatch, sgbs_factor=40.0)
    return clock, calls, stops


def test_sgbs_runs_after_x8_when_its_predicted_time_fits(sgbs_decode):
    """x8 took 0.5 s, so SGBS is predicted 40 x 0.5 = 20 s: with 20.5 s it fits exactly."""
    clock, calls, _ = sgbs_decode
    policy = Policy()
    found = learned_starts(corner(), policy, seconds=20.5, count=2, env="env", clock=clock)
    assert found.decode == "x8+sgbs" and found.trajectories == 8 * 2 + 1
    assert calls == [(policy, "env", "sgbs:4x4+aug8", (1, 5, 2))]
    assert found.solutions == [S1, S3] and found.rollouts == [S1, S2, S3]
    calls.clear()
    found = learned_starts(corner(), policy, seconds=20.4, count=2, env="env", clock=clock)
    assert found.decode == "x8" and calls == []
    found = learned_starts(corner(), policy, seconds=100.0, sgbs=False, env="env", clock=clock)
    assert found.decode == "x8" and calls == []


def test_sgbs_asked_for_runs_whenever_its_first_step_fits_and_stops_at_the_deadline(
    sgbs_decode,
):
    """SGBS asked for by name: x8 took 0.5 s, so SGBS's own first step (a greedy multistart as
    long) fits twice over in 1.0 s: it runs (the hybrid's rule would want 40 x 0.5 = 20 s), and
    its stop says yes from the budget's end less one x8 time (the last expansion's overrun)."""
    clock, calls, stops = sgbs_decode
    begin = clock.now
    found = learned_starts(corner(), Policy(), seconds=1.5, count=2, sgbs=True, env="env",
                           clock=clock)  # fmt: skip
    assert found.decode == "x8+sgbs" and len(calls) == 1
    stop = stops[-1]
    clock.now = begin + 1.5 - 0.5 - 1e-9
    assert not stop()
    clock.now = begin + 1.0
    assert stop()
    found = learned_starts(corner(), Policy(), seconds=1.4, sgbs=True, env="env", clock=clock)
    assert found.decode == "x8" and len(calls) == 1  # 0.9 s left: the first step may not fit


def test_sgbs_follows_only_an_x8_decode(sgbs_decode, monkeypatch):
    """Also: more depots than customers in a unit-by-unit decode (the depots' node indices
    are left as they are when the customers are mapped back)."""
    clock, calls, _ = sgbs_decode
    decode_params(monkeypatch, trajectory_node_limit=5 * 2)  # x8 does not fit in memory
    found = learned_starts(corner(), Policy(), seconds=1e6, env="env", clock=clock)
    assert found.decode.startswith("greedy") and calls == []


def test_a_recombination_with_a_new_depot_set_displaces_the_last_start(monkeypatch):
    """Starts S3, S5 and X (depots {1}, {2}, {1}); the recombination S1 (depot {0}) shares no
    start's set: it leads and the costliest start (X) gives way; the count stays 3."""
    x = CLRPSolution([Route(1, (0,)), Route(1, (1,))])
    instance = corner()
    starts = [S3, S5, x]
    found = LearnedStarts(solutions=starts, objectives=[s.cost(instance).total for s in starts],
                          decode="x8", rollouts=starts)  # fmt: skip
    seen = []

    def recombine(inst, rollouts, seconds):
        seen.append((rollouts, seconds))
        return S1

    monkeypatch.setattr(hybrid, "recombine", recombine)
    hybrid._recombine_starts(instance, found, 2.5)
    assert seen == [(starts, 2.5)]
    assert found.solutions == [S1, S3, S5] and found.decode == "x8+recombined"
    assert found.objectives == [COST["S1"], COST["S3"], COST["S5"]]


def test_nothing_runs_on_zero_seconds(fakes, monkeypatch):
    """Without the end margin and the overrun reserve the budget runs out exactly: no run is
    started on the 0 s left (neither the recombination after a decode that took it all, nor
    the last refinement after candidates that took it all)."""
    clock, calls = fakes
    hybrid_params(monkeypatch, end_margin=0.0, end_share=0.0)
    solve_hybrid(corner(), Policy(), seconds=100.0, start_share=1.0, recombine_share=0.5,
                 clock=clock)  # fmt: skip
    assert [c[0] for c in calls] == ["decode"] and RECOMBINED == []
    calls.clear()
    solve_hybrid(corner(), Policy(), seconds=100.0, explore_share=1.0, clock=clock)
    assert [c[1] for c in calls] == [30.0, 17.5, 17.5, 17.5, 17.5]  # no last refinement


def test_nothing_is_decoded_when_the_encoder_alone_would_pass_its_memory_limit(monkeypatch, caplog):
    """100 bytes per pair of nodes: 11 nodes take 12,100 bytes; with the limit just below
    that nothing is decoded (and the hybrid is PyVRP alone), just above it the greedy runs."""
    assert decode_plan.predict_encoder_gb(10_000, 600) == 11.236
    assert decode_plan.predict_encoder_gb(9, 2) == 12_100 / 1e9
    instance = ring(9, seed=2)
    ran = []

    def rollouts(policy, env, decoded, augment, starts):
        ran.append(starts)
        return np.array([[0, *range(2, 11), 0]]), np.full(1, 1.0)

    monkeypatch.setattr(decoding, "_rollouts", rollouts)
    decode_params(monkeypatch, encoder_memory_gb=12_000 / 1e9)
    with caplog.at_level(logging.INFO, logger=decode_plan.__name__):
        found = learned_starts(instance, None, seconds=100.0, count=1, sgbs=False, env="unused")
    assert (found.decode, found.solutions, ran) == ("none", [], [])
    assert caplog.messages == [
        f"{instance.name}: no decoding (the encoder would take about 0.0 GB, above 0.0 GB)"
    ]
    decode_params(monkeypatch, encoder_memory_gb=12_100 / 1e9)  # at the limit: it runs
    found = learned_starts(instance, None, seconds=100.0, count=1, sgbs=False, env="unused")
    assert ran and found.solutions
