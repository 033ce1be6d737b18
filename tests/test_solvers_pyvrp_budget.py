"""How the PyVRP solver shares its budget: the fleet / trips split of one depot set, when the
depot-set search stops, which moves it searches and what the last run gets. PyVRP itself is
replaced by fakes that record the budgets they are given and spend them on a fake clock, so
every expected value below is exact (computed by hand from the documented shares)."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from clocks import FakeClock, TickingClock

from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route
from clrp_rl4co.solvers import large, pyvrp_solver, set_estimate, set_search
from clrp_rl4co.solvers.pyvrp_solver import PARAMS, depot_set_search, route_on_set
from clrp_rl4co.solvers.set_estimate import OutOfTime, RankingParams, SetEstimate
from clrp_rl4co.solvers.set_search import SetSearchParams
from clrp_rl4co.solvers.stopping import Deadline

#: The trips polish of the search's polishing runs (route_on_set's default too).
POLISH_SHARE = SetSearchParams().polish_share


def spread(depots, num_customers: int) -> CLRPSolution:
    """One route per customer, dealt round-robin over ``depots`` (all of them open)."""
    depots = sorted(depots)
    return CLRPSolution([Route(depots[j % len(depots)], (j,)) for j in range(num_customers)])


def two_clusters() -> CLRPInstance:
    """Depots 0 and 1 each beside a cluster of three customers, depots 2 and 3 far away; every
    depot holds all the demand and opens for 1: by the estimate, {0, 1} is the best set."""
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [100.0, 0.0], [50.0, 400.0], [-400.0, 50.0]]),
        customer_locs=np.array(
            [[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [100.0, 1.0], [101.0, 0.0], [99.0, 1.0]]
        ),
        depot_capacity=np.full(4, 100.0),
        opening_cost=np.ones(4),
        demand=np.ones(6),
        vehicle_capacity=3.0,
        vehicle_fixed_cost=1.0,
        name="two-clusters",
    )


# ----------------------------------------------------------------------------- route_on_set
@pytest.fixture
def fake_runs(monkeypatch):
    """``run_pyvrp`` replaced: records ``(encoding kind, seconds, iterations, seed)`` (the
    seconds a deadline leaves when one is given), spends
    the seconds on the clock, returns a valid solution on the encoding's depots."""
    clock, calls = FakeClock(), []

    def run(enc, seconds, max_iterations=None, seed=0, initial=None, give_up=None,
            scaled_history=False):  # fmt: skip
        if isinstance(seconds, Deadline):  # the caller's deadline: the seconds it leaves
            seconds = seconds.left()
        calls.append((enc.kind, seconds, max_iterations, seed))
        HISTORIES.append(scaled_history)
        RUNS.append((enc.kind, enc.depots, initial))
        GIVE_UPS.append(give_up)
        found = RESULTS.pop(0) if RESULTS else spread(enc.depots, 6)
        if found is None and give_up is not None:  # nothing feasible: it gives up
            clock.now += give_up
        else:
            clock.now += seconds or 0.0
        return found

    monkeypatch.setattr(pyvrp_solver, "run_pyvrp", run)
    RUNS.clear()
    RESULTS.clear()
    GIVE_UPS.clear()
    HISTORIES.clear()
    return clock, calls


RUNS: list = []  # (encoding kind, its depots, warm start) of each fake PyVRP run
RESULTS: list = []  # what the next fake PyVRP runs return (then a spread solution)
GIVE_UPS: list = []  # the give_up argument of each fake PyVRP run
HISTORIES: list = []  # the scaled_history argument of each fake PyVRP run


def overrun_fleet(clock: FakeClock, seconds: float) -> None:
    """Make the fake fleet runs of :func:`fake_runs` take ``seconds`` more than their budget
    on ``clock`` (the fixture's monkeypatch restores PyVRP's run afterwards)."""
    fake = pyvrp_solver.run_pyvrp

    def slow_fleet(enc, budget, *args, **kwargs):
        found = fake(enc, budget, *args, **kwargs)
        clock.now += seconds if enc.kind == "fleet" else 0.0
        return found

    pyvrp_solver.run_pyvrp = slow_fleet


def test_without_a_time_budget_the_fleet_never_gives_up(fake_runs):
    _, calls = fake_runs  # iterations only: runs stay deterministic
    RESULTS.extend([None])
    route_on_set(two_clusters(), [0, 1], seconds=None, max_iterations=1000)
    assert calls == [("fleet", None, 900, 0), ("trips", None, 900, 0)]
    assert GIVE_UPS == [None, None]


def test_route_on_set_gives_the_fleet_nine_tenths_and_the_trips_the_time_left(fake_runs):
    clock, calls = fake_runs
    route_on_set(two_clusters(), [1, 0], seconds=10.0, seed=4, clock=clock)
    assert PARAMS.polish_share == POLISH_SHARE == 0.1
    assert HISTORIES == [False, False]  # PyVRP's own history unless asked
    assert calls == [("fleet", pytest.approx(9.0), None, 4), ("trips", pytest.approx(1.0), None, 5)]


def test_route_on_set_the_trips_get_what_the_fleet_left_of_the_time(fake_runs):
    """A fleet run that overruns its 9 s by 0.5 s leaves the trips 0.5 s, not 1 s."""
    clock, calls = fake_runs
    overrun_fleet(clock, 0.5)
    route_on_set(two_clusters(), [0, 1], seconds=10.0, clock=clock)
    assert [c[:2] for c in calls] == [("fleet", pytest.approx(9.0)), ("trips", pytest.approx(0.5))]


def test_route_on_set_splits_an_iteration_budget_the_same_way(fake_runs):
    _, calls = fake_runs
    route_on_set(two_clusters(), [0, 1], seconds=None, max_iterations=1000)
    assert calls == [("fleet", None, 900, 0), ("trips", None, 100, 1)]


def test_route_on_set_without_polish_is_one_fleet_run_on_the_whole_budget(fake_runs):
    clock, calls = fake_runs
    route_on_set(two_clusters(), [0, 1], seconds=10.0, max_iterations=50, polish_share=0,
                 clock=clock)  # fmt: skip
    assert calls == [("fleet", 10.0, 50, 0)]


# ------------------------------------------------------------------------ depot_set_search
@pytest.fixture
def fake_sets(monkeypatch):
    """``route_on_set`` replaced: records ``(depots, seconds, iterations, polish_share)``,
    spends three times its seconds on the clock (a slow machine); the first run finds a
    solution on its set, every later one nothing (no move improves)."""
    fake_clock, calls = FakeClock(), []

    def route(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
              polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        assert clock is fake_clock
        calls.append((tuple(sorted(depots)), seconds, max_iterations, polish_share))
        fake_clock.now += 3 * (seconds or 0.0)
        return spread(depots, instance.num_customers) if len(calls) == 1 else None

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    return fake_clock, calls


def moves(current: tuple[int, ...], num_depots: int) -> set[tuple[int, ...]]:
    """Drop, swap and add moves of ``current`` (every depot here holds all the demand)."""
    closed = [d for d in range(num_depots) if d not in current]
    drops = {tuple(x for x in current if x != d) for d in current}
    swaps = {tuple(sorted([x for x in current if x != d] + [c])) for d in current for c in closed}
    adds = {tuple(sorted([*current, c])) for c in closed}
    return drops | swaps | adds


def test_the_search_tries_every_drop_swap_and_add_and_the_last_run_gets_the_iterations_left(
    fake_sets,
):
    """Iterations: first set 15%, each candidate 4%; when no move improves, the last run gets
    every iteration not spent (here 1000 - 150 - 8 x 40 = 530, more than its 20%)."""
    clock, calls = fake_sets
    found = depot_set_search(two_clusters(), seconds=None, max_iterations=1000, clock=clock)
    first, *candidates, last = calls
    assert first == ((0, 1), None, 150, 0)
    expected = moves((0, 1), 4)
    assert expected == {(0,), (1,), (1, 2), (1, 3), (0, 2), (0, 3), (0, 1, 2), (0, 1, 3)}
    assert sorted(c[0] for c in candidates) == sorted(expected)
    assert {c[1:] for c in candidates} == {(None, 40, 0)}
    assert last == ((0, 1), None, 1000 - 150 - 8 * 40, POLISH_SHARE)
    assert found.open_depots == (0, 1)


def test_the_search_stops_when_its_share_of_the_time_is_spent(fake_sets):
    """100 s, the last run's share 20%: candidates start only while at most 80 s are spent.
    The first run (15 s) takes 45 s on this clock and each candidate (4 s) 12 s: candidates
    start at 45, 57 and 69 s; at 81 s the search stops and the last run gets the 19 s left."""
    clock, calls = fake_sets
    depot_set_search(two_clusters(), seconds=100.0, clock=clock)
    first, *candidates, last = calls
    assert first == ((0, 1), pytest.approx(15.0), None, 0)
    assert [c[1:] for c in candidates] == [(pytest.approx(4.0), None, 0)] * 3
    assert last == ((0, 1), pytest.approx(19.0), None, POLISH_SHARE)


def test_set_estimate_stops_at_a_deadline_set_through_its_method():
    clock = FakeClock(0.0)
    est = SetEstimate(two_clusters())
    est.stop_at(Deadline(5.0, clock))
    assert np.isfinite(est((0, 1)))
    clock.now = 5.5
    assert est((0, 1)) == est((1, 0))  # cached sets are still answered
    with pytest.raises(OutOfTime):
        est((2, 3))
    est.stop_at(None)
    assert np.isfinite(est((2, 3)))


def test_the_ranking_stops_after_its_time_on_the_clock():
    """``best_sets(deadline=...)`` measures on the deadline's clock."""

    # the deadline is read at 1 s: 4.5 s; new sets are estimated at 2, 3 and 4 s, not at 5 s
    ranked = SetEstimate(two_clusters()).best_sets(deadline=Deadline(3.5, TickingClock()))
    assert sorted(ranked) == [(0,), (0, 1), (1,)]
    assert len(SetEstimate(two_clusters()).best_sets()) == 15


def test_the_set_estimate_by_hand():
    """Opening costs + F per ``ceil(load / q)`` routes + the radial part ``2 d D / q``."""
    est = SetEstimate(two_clusters())
    root2 = math.sqrt(2)
    near = 1 + 1 + root2  # each depot to its own cluster
    assert est((1, 0)) == pytest.approx(2 + 2 * 1 + 2 * (2 * near) / 3, rel=1e-12)
    far = math.hypot(100, 1) + 101 + math.hypot(99, 1)  # depot 0 to the other cluster
    assert est((0,)) == pytest.approx(1 + 2 * 1 + 2 * (near + far) / 3, rel=1e-12)
    assert est(()) == math.inf


def overloaded_nearest_depot(customer_x: list[float]) -> CLRPInstance:
    """Depots at x = 0 (capacity 2) and x = 6 (capacity 10), unit-demand customers on the line
    at ``customer_x``, no opening or vehicle costs."""
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [6.0, 0.0]]),
        customer_locs=np.array([[x, 0.0] for x in customer_x]),
        depot_capacity=np.array([2.0, 10.0]),
        opening_cost=np.zeros(2),
        demand=np.ones(len(customer_x)),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=0.0,
    )


def test_an_overloaded_nearest_depot_gives_way_by_regret():
    """Depot 0 (capacity 2) is nearest to all three customers; the two that lose most by
    going to depot 1 (regrets 5 - 1 = 4 and 4 - 2 = 2: customers 0 and 1) stay at depot 0;
    customer 2 (regret 3.1 - 2.9 = 0.2) moves to depot 1 (capacity 10)."""
    instance = overloaded_nearest_depot([1.0, 2.0, 2.9])
    est = SetEstimate(instance)
    assert est._assign(est.dist, est.capacity).tolist() == [0, 0, 1]
    # radial: 2 (1 + 2) / 10 at depot 0 and 2 x 3.1 / 10 at depot 1; one route each
    assert est((0, 1)) == pytest.approx(2 * (1 + 2) / 10 + 2 * 3.1 / 10, rel=1e-12)
    assert est((0,)) == math.inf  # 2 < 3 units of demand


def test_neighbour_sets_in_estimate_order_and_only_those_with_room():
    instance = two_clusters()
    est = SetEstimate(instance)
    ranked = set_search.neighbour_sets(instance, (0, 1), est)
    assert sorted(ranked) == sorted(moves((0, 1), 4))
    assert [est(s) for s in ranked] == sorted(est(s) for s in ranked)
    small = dataclasses.replace(instance, depot_capacity=np.array([4.0, 4.0, 4.0, 1.0]))
    # 6 units of demand: no single depot, and {x, 3} only with 4 + 1 < 6: none of those
    assert sorted(set_search.neighbour_sets(small, (0, 1))) == [(0, 1, 2), (0, 1, 3), (0, 2),
                                                                    (1, 2)]  # fmt: skip


def test_a_first_set_without_a_solution_falls_back_to_the_next_ranked_then_all_depots(
    monkeypatch,
):
    instance = two_clusters()
    ranked = SetEstimate(instance).best_sets()
    calls = []

    def route(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
              polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        calls.append((tuple(sorted(depots)), max_iterations, seed, polish_share))
        return spread(depots, 6) if len(depots) == 4 else None

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    found = depot_set_search(instance, seconds=None, max_iterations=100, seed=3)
    first_runs = [(s, 15, 3, 0.0) for s in ranked[:3]] + [((0, 1, 2, 3), 15, 3, 0.0)]
    assert calls[:4] == first_runs and found.open_depots == (0, 1, 2, 3)
    calls.clear()
    monkeypatch.setattr(pyvrp_solver, "route_on_set", lambda *a, **k: calls.append(a) or None)
    assert depot_set_search(instance, seconds=None, max_iterations=100) is None
    assert len(calls) == 4  # nothing anywhere: no search


def test_a_warm_start_is_searched_from_its_own_set_and_kept_when_nothing_beats_it(monkeypatch):
    instance = two_clusters()
    calls = []

    def route(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
              polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        calls.append((tuple(sorted(depots)), initial))
        far = CLRPSolution([Route(2, (j,)) for j in range(6)])  # costlier than the start
        return far if len(calls) == 1 else None

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    start = spread((0, 2), 6)
    found = depot_set_search(instance, seconds=None, max_iterations=1000, initial=start)
    assert found is start
    assert calls[0] == ((0, 2), start)  # the first run: the warm start's set, from it
    assert calls[1][0] == (0, 1)  # then the estimate's best set comes first in the search
    assert calls[-1] == ((0, 2), start)  # the last run on the best set


def test_solve_pyvrp_returns_the_initial_solution_when_pyvrp_only_ties_it(monkeypatch):
    """``initial`` is returned when PyVRP finds nothing better: a different solution of
    exactly its cost (the same routes reversed) does not replace it."""
    instance = two_clusters()
    initial = CLRPSolution([Route(0, (0, 1, 2)), Route(1, (3, 4, 5))])
    tie = CLRPSolution([Route(1, (5, 4, 3)), Route(0, (2, 1, 0))])
    assert tie != initial
    assert tie.cost(instance).total == initial.cost(instance).total

    def search(instance, seconds, max_iterations, seed, initial=None):
        return tie

    monkeypatch.setattr(pyvrp_solver, "depot_set_search", search)
    found = pyvrp_solver.solve_pyvrp(instance, seconds=None, max_iterations=5, initial=initial)
    assert found.solution is initial


def test_solve_pyvrp_searches_depot_sets_with_two_or_more_depots(monkeypatch):
    calls = []

    def search(instance, seconds, max_iterations, seed, initial=None):
        calls.append(("search", seconds.seconds, max_iterations, seed, initial))  # a deadline
        return spread((0, 1), 6)

    def run(enc, seconds, max_iterations, seed, initial):
        calls.append(("run", enc.depots, seconds.seconds, max_iterations, seed, initial))
        return spread((0,), 6)

    monkeypatch.setattr(pyvrp_solver, "depot_set_search", search)
    monkeypatch.setattr(pyvrp_solver, "run_pyvrp", run)
    instance = two_clusters()
    result = pyvrp_solver.solve_pyvrp(instance, seconds=2.0, max_iterations=9, seed=4)
    assert calls == [("search", 2.0, 9, 4, None)] and result.solver == "pyvrp"
    assert result.solution.open_depots == (0, 1) and result.name == "two-clusters"
    calls.clear()
    alone = pyvrp_solver.solve_pyvrp(instance, seconds=None, max_iterations=9, depot_search=False)
    assert calls == [("run", [0, 1, 2, 3], None, 9, 0, None)]
    assert alone.solution.open_depots == (0,)
    one = dataclasses.replace(instance, depot_locs=instance.depot_locs[:1],
                              depot_capacity=instance.depot_capacity[:1],
                              opening_cost=instance.opening_cost[:1])  # fmt: skip
    calls.clear()
    pyvrp_solver.solve_pyvrp(one)  # one depot: no set to search; 1 s by default
    assert calls == [("run", [0], 1.0, None, 0, None)]
    better = CLRPSolution([Route(0, (0, 1, 2)), Route(1, (3, 4, 5))])
    calls.clear()
    kept = pyvrp_solver.solve_pyvrp(instance, seconds=1.0, initial=better)
    assert kept.solution is better and calls[0][-1] is better
    seen = []
    monkeypatch.setattr(pyvrp_solver, "depot_set_search", lambda instance, seconds, *a, **k:
                        seen.append(seconds) or spread((0, 1), 6))  # fmt: skip
    deadline = Deadline(3.0)
    pyvrp_solver.solve_pyvrp(instance, seconds=deadline)
    assert seen == [deadline]  # the caller's deadline itself is handed down


# ------------------------------------------------------------------ what each run is given
def test_route_on_set_starts_no_polish_once_the_deadline_has_passed(fake_runs):
    """A fleet run that overruns the whole 10 s (by 0.5 s) leaves no time: the trips polish
    does not start (a PyVRP run past its deadline still pays its set-up), and the fleet's
    solution is returned."""
    clock, calls = fake_runs
    overrun_fleet(clock, 1.5)
    found = route_on_set(two_clusters(), [0, 1], seconds=10.0, clock=clock)
    assert [c[0] for c in calls] == ["fleet"]
    assert found == spread([0, 1], 6)


CHEAP = CLRPSolution([Route(0, (0, 1, 2)), Route(1, (3, 4, 5))])  # on {0, 1}
DEAR = CLRPSolution([Route(0, (j,)) for j in range(3)] + [Route(1, (j,)) for j in range(3, 6)])


def test_route_on_set_runs_on_its_depots_from_the_warm_start_and_keeps_the_cheaper(fake_runs):
    clock, calls = fake_runs
    start = spread((0, 1), 6)
    RESULTS[:] = [DEAR, CHEAP]  # the trips polish improves on the fleet's result
    found = route_on_set(two_clusters(), (1, 0), 10.0, seed=2, initial=start, clock=clock)
    assert RUNS == [("fleet", [0, 1], start), ("trips", [0, 1], DEAR)]
    assert found is CHEAP and [c[3] for c in calls] == [2, 3]
    RESULTS[:] = [CHEAP, DEAR]  # the polish does worse: the fleet's result stays
    assert route_on_set(two_clusters(), (0, 1), 10.0, clock=clock) is CHEAP
    RESULTS[:] = [CHEAP, None]  # the polish finds nothing
    assert route_on_set(two_clusters(), (0, 1), 10.0, clock=clock) is CHEAP


def test_route_on_set_falls_back_to_the_trips_on_the_time_left_when_the_fleet_finds_nothing(
    fake_runs,
):
    # the fleet's 9 s of 10 with a give-up after 4.5 s; it finds nothing and gives up, so
    # the trips run gets its 9 s share cut to the 5.5 s left (and nothing to polish)
    clock, calls = fake_runs
    start = spread((0, 1), 6)
    RESULTS[:] = [None, CHEAP]
    found = route_on_set(two_clusters(), (1, 0), 10.0, 100, seed=4, initial=start, clock=clock)
    assert found is CHEAP
    assert calls == [("fleet", pytest.approx(9.0), 90, 4), ("trips", pytest.approx(5.5), 90, 4)]
    assert RUNS == [("fleet", [0, 1], start), ("trips", [0, 1], start)]
    assert GIVE_UPS == [pytest.approx(4.5), None]


class Costs:
    """Stands for ``solution_cost``: the cost of each fake solution by its identity (``inf`` for
    None), so that a search can be scripted to improve or not."""

    def __init__(self, instance):
        self.instance, self.of = instance, {}

    def __call__(self, instance, solution):
        assert instance is self.instance
        return math.inf if solution is None else self.of[id(solution)]

    def new(self, depots, cost):
        solution = spread(depots, 6)
        self.of[id(solution)] = cost
        return solution


def eight_depots() -> CLRPInstance:
    """Eight depots on a circle around six customers; it takes three of them to hold the
    demand, so a set has at least 3 x 5 swaps and 5 adds (no drop). Opening costs of 100 keep
    its depots far from nearly free (the set search runs)."""
    angle = np.arange(8) * np.pi / 4
    return CLRPInstance(
        depot_locs=np.column_stack([np.cos(angle), np.sin(angle)]) * 50 + 50,
        customer_locs=np.array([[50.0, 50 + k] for k in range(6)]),
        depot_capacity=np.full(8, 2.5),
        opening_cost=np.full(8, 100.0),
        demand=np.ones(6),
        vehicle_capacity=2.0,
        vehicle_fixed_cost=1.0,
        name="eight",
    )


def scripted_search(monkeypatch, instance, improve, **kwargs):
    """depot_set_search with fake runs: the first costs 100, each candidate ``improve(k)``
    (k = 1, 2, ...: the cost relative to the best so far, e.g. -1 improves) and the last run
    the best so far + 1. Returns (result, [(depots, seed, warm start)], costs)."""
    costs = Costs(instance)
    monkeypatch.setattr(set_search, "solution_cost", costs)
    calls, best = [], [100.0]

    def route(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
              polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        depots = tuple(sorted(depots))
        calls.append((depots, seed, initial))
        if len(calls) == 1:
            return costs.new(depots, 100.0)
        if polish_share:  # the last run
            return costs.new(depots, best[0] + 1)
        cost = best[0] + improve(len(calls) - 1)
        best[0] = min(best[0], cost)
        return costs.new(depots, cost)

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    found = depot_set_search(instance, None, 1000, **kwargs)
    return found, calls, costs


@pytest.mark.parametrize(
    "shares, evals",
    [({}, 16), ({"params": SetSearchParams(first_share=0.2, final_share=0.2)}, 15)],
)
def test_the_search_runs_at_most_its_share_of_candidates(monkeypatch, shares, evals):
    """(1 - 0.15 - 0.2) / 0.04 = 16.25: 16 candidates; (1 - 0.2 - 0.2) / 0.04 = 15 (not 14,
    as the rounding of 0.6 / 0.04 = 14.999... would give), improving or not."""
    for improve in (lambda k: +1.0, lambda k: -1.0):
        found, calls, costs = scripted_search(monkeypatch, eight_depots(), improve, **shares)
        assert len(calls) == 1 + evals + 1


def test_each_improvement_restarts_from_the_new_set_and_no_set_is_run_twice(monkeypatch):
    """Every other candidate improves (by 0.5: less than 1 counts). Candidate k is seeded
    ``seed + k`` and warm-started from the best so far; the last run (seed + 10007) too."""
    instance = eight_depots()
    found, calls, costs = scripted_search(
        monkeypatch, instance, lambda k: -0.5 if k % 2 == 0 else 0.0, seed=5
    )
    first, *candidates, last = calls
    assert len(set(c[0] for c in calls[:-1])) == len(calls) - 1  # each set once
    assert [c[1] for c in candidates] == [5 + k for k in range(1, len(candidates) + 1)]
    best = first
    for k, (depots, _, warm) in enumerate(candidates, start=1):
        assert costs(instance, warm) == 100.0 - 0.5 * ((k - 1) // 2)  # the best so far
        if k % 2 == 0:  # an improvement: the next candidates are its neighbours
            best = (depots,)
        elif k > 1:
            assert depots in moves(best[0], 8) or k == 1
    assert last[1] == 5 + 10_007 and last[0] == best[0]
    assert costs(instance, found) == 100.0 - 0.5 * (len(candidates) // 2)  # last run: worse


def test_an_equal_cost_is_no_improvement_and_a_better_last_run_is_kept(monkeypatch):
    instance = eight_depots()
    found, calls, costs = scripted_search(monkeypatch, instance, lambda k: 0.0)
    assert len(calls) == 1 + 16 + 1 and calls[-1][0] == calls[0][0]
    assert costs(instance, found) == 100.0  # the first run's
    better = {}

    def last_improves(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
                      polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        solution = costs.new(depots, 99.0 if polish_share else 100.0)
        better["last"] = solution
        return solution

    monkeypatch.setattr(pyvrp_solver, "route_on_set", last_improves)
    assert depot_set_search(instance, None, 100) is better["last"]


def test_the_first_run_is_kept_unless_the_warm_start_is_cheaper(monkeypatch):
    instance = two_clusters()
    costs = Costs(instance)
    monkeypatch.setattr(set_search, "solution_cost", costs)
    start = costs.new((0, 2), 50.0)
    runs = []

    def route(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
              polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        runs.append(initial)
        return costs.new(depots, 40.0) if len(runs) == 1 else None

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    found = depot_set_search(instance, None, 100, initial=start)
    assert costs(instance, found) == 40.0 and runs[0] is start
    assert all(warm is runs[1] for warm in runs[1:]) and costs(instance, runs[1]) == 40.0


def test_a_candidate_exactly_at_the_search_end_still_runs(monkeypatch):
    """Shares exact in binary: 100 s, the last run 25%: the search ends at 75 s; the first run
    (25 s) and each candidate (12.5 s) take twice their time: candidates start at 50 and 75 s
    (not after 75 s) and the third would start at 100 s."""
    clock = FakeClock()
    calls = []

    def route(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
              polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        calls.append((tuple(sorted(depots)), seconds, max_iterations))
        clock.now += 2 * seconds
        return spread(depots, 6) if len(calls) == 1 else None

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    shares = SetSearchParams(first_share=0.25, eval_share=0.125, final_share=0.25)
    depot_set_search(two_clusters(), 100.0, 1000, clock=clock, params=shares)
    assert [c[1] for c in calls] == [25.0, 12.5, 12.5, 0.0]  # the last run: nothing left
    # iterations: the time stop counts as every candidate run: 1000 - 250 - 4 x 125 = 250
    assert calls[-1][2] == 250


def test_ranking_out_of_time_ends_the_search_with_its_best_set(monkeypatch):
    """A clock that ticks 1 s per read: the ranking (10% of 100 s) estimates ten sets; the
    first run then takes 84 s, so the search ends (at 80 s) when the neighbours of the first
    set need new estimates; the last run gets what is left (each run reads the clock once,
    for the time the search has left)."""

    clock, calls = TickingClock(), []

    def route(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
              polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        calls.append((tuple(sorted(depots)), seconds))
        clock.now += 84.0 if len(calls) == 1 else 0.0
        return spread(depots, 6)

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    found = depot_set_search(two_clusters(), 100.0, clock=clock)
    assert [c[0] for c in calls] == [(0, 1), (0, 1)] and found.open_depots == (0, 1)
    assert 0 < calls[-1][1] < 100.0 - 84.0 - 10.0  # the ranking's ticks and others less
    clock, calls = TickingClock(), []
    depot_set_search(two_clusters(), 1e-3, clock=clock)  # no set ranked in time: all depots
    assert calls[0][0] == (0, 1, 2, 3)


def test_a_fallback_set_that_works_ends_the_fallback(monkeypatch):
    instance = two_clusters()
    ranked = SetEstimate(instance).best_sets()
    calls = []

    def route(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
              polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        calls.append((tuple(sorted(depots)), seconds))
        return spread(depots, 6) if len(calls) == 2 else None

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    found = depot_set_search(instance, 10.0, clock=FakeClock())
    assert calls[:2] == [(ranked[0], pytest.approx(1.5)), (ranked[1], pytest.approx(1.5))]
    assert found.open_depots == ranked[1]


def test_with_few_sets_enumerated_the_descent_still_finds_the_best_set():
    """Five sets allowed: the four singletons are enumerated (the pairs would make ten), then
    a greedy drop from all depots and a drop / swap / add descent from the best ones. The best
    set by full enumeration, {0, 1}, is found, and not every set was estimated."""
    full = SetEstimate(two_clusters()).best_sets()
    assert full[0] == (0, 1) and len(full) == 15
    est = SetEstimate(two_clusters())
    ranked = est.best_sets(max_sets=5, starts=1)
    assert ranked[0] == (0, 1)
    assert {(0,), (1,), (2,), (3,), (0, 1, 2, 3)} <= set(ranked) and len(ranked) < 15
    assert [est(s) for s in ranked] == sorted(est(s) for s in ranked)
    assert est.moves((0, 1)) == [(1,), (0,), (1, 2), (1, 3), (0, 2), (0, 3), (0, 1, 2), (0, 1, 3)]
    assert est.moves((2,)) == [(0,), (1,), (3,), (0, 2), (1, 2), (2, 3)]  # no drop of the last


class Landscape(SetEstimate):
    """A :class:`SetEstimate` whose estimate is given: the sum of per-depot weights, a penalty
    below ``min_size`` depots and a bonus on some hidden sets (only its ranking is under test);
    the empty set, which holds no demand, costs ``inf`` as in the real estimate."""

    def __init__(self, weights, min_size, penalty, bonus=None, located=None):
        self.num_depots = len(weights)
        self._cache, self._deadline, self.params = {}, None, RankingParams()
        self.weights, self.min_size, self.penalty = weights, min_size, penalty
        self.bonus = {tuple(k): v for k, v in (bonus or {}).items()}
        self.located = located

    def located_set(self):
        return self.located

    def _evaluate(self, key):
        if not key:
            return math.inf
        value = sum(self.weights[d] for d in key) + self.penalty * (len(key) < self.min_size)
        return value - self.bonus.get(key, 0.0)


def test_the_ranking_descends_from_the_greedy_drop_two_swaps_away():
    # 12 depots: 4,095 sets, more than max_sets = 100, so only the sets of 1 and 2 depots
    # (12 + 66 = 78) are enumerated; below 10 depots a set pays 5. The greedy drop from all
    # depots drops the two dearest (10: 0.50, then 11: 0.40) and stops at {0..9} (1.20):
    # dropping another costs the penalty. Two hidden sets hold depot 10, so no set on the drop
    # path leads to them: {1..10} is one swap from {0..9} (out 0 at 0.30, in 10 at 0.50, bonus
    # 0.25: 1.15), {1..8, 10, 11} one more (out 9 at 0.18, in 11 at 0.40, bonus 0.50: 1.12).
    # Every step improves by less than 1; only a descent that moves twice finds the best (with
    # starts=0 the descent starts from the greedy drop's end alone).
    weights = [0.30, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.18, 0.50, 0.40]
    first, best = tuple(range(1, 11)), (*range(1, 9), 10, 11)
    est = Landscape(weights, min_size=10, penalty=5.0, bonus={first: 0.25, best: 0.50})
    ranked = est.best_sets(max_sets=100, starts=0)
    assert ranked[:3] == [best, first, tuple(range(10))]  # the descent's steps, then the drop's
    assert [est(s) for s in ranked[:3]] == pytest.approx([1.12, 1.15, 1.20])
    small = [s for s in ranked if len(s) <= 2]
    assert len(small) == 78  # every set of one or two depots
    assert len([s for s in ranked if len(s) == 3]) < 220  # the sets of 3 are not enumerated
    assert ranked == sorted(ranked, key=lambda s: (est(s), s))


def test_the_ranking_descends_from_the_location_models_set_too():
    # The landscape above with a third hidden set, {0..6, 9, 10, 11} (0.72 + 0.18 + 0.90 - 1.00
    # bonus: 0.80), two swaps from every set the descents of the test above visit, so no
    # descent from those reaches it. The model's set {0..6, 8, 9, 11} (1.46, no bonus) is one
    # swap from it (out 8, in 10): only a descent from that set finds it.
    weights = [0.30, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.18, 0.50, 0.40]
    first, second = tuple(range(1, 11)), (*range(1, 9), 10, 11)
    hidden, located = (*range(7), 9, 10, 11), (*range(7), 8, 9, 11)
    bonus = {first: 0.25, second: 0.50, hidden: 1.00}
    without = Landscape(weights, min_size=10, penalty=5.0, bonus=bonus)
    ranked = without.best_sets(max_sets=100, starts=0)
    assert ranked[0] == second
    assert hidden not in ranked
    est = Landscape(weights, min_size=10, penalty=5.0, bonus=bonus, located=located)
    ranked = est.best_sets(max_sets=100, starts=0)
    assert ranked[:2] == [hidden, second]
    assert est(hidden) == pytest.approx(0.80)
    assert est(located) == pytest.approx(1.46)
    assert located in ranked


def test_below_fifteen_depots_a_slow_model_cannot_cost_the_descents():
    # The landscape above (12 depots); the model's set would lead to the best set, but solving
    # the model takes 100 s of a 1 s ranking. Below model_first_depots it runs after the
    # drop's descent, which therefore still reaches {1..8, 10, 11}; from 15 depots it runs
    # first and the deadline then stops the ranking before the drop.
    weights = [0.30, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.18, 0.50, 0.40]
    second = (*range(1, 9), 10, 11)
    hidden, located = (*range(7), 9, 10, 11), (*range(7), 8, 9, 11)
    bonus = {tuple(range(1, 11)): 0.25, second: 0.50, hidden: 1.00}
    clock = FakeClock()

    class SlowModel(Landscape):
        def located_set(self):
            clock.now += 100.0
            return self.located

    assert RankingParams().model_first_depots == 15
    est = SlowModel(weights, min_size=10, penalty=5.0, bonus=bonus, located=located)
    assert est.best_sets(max_sets=100, starts=0, deadline=Deadline(1.0, clock))[0] == second


def test_every_set_is_ranked_when_they_fit_into_max_sets():
    weights = [0.3, 0.1, 0.2, 0.4, 0.5]  # 31 non-empty sets
    est = Landscape(weights, min_size=1, penalty=0.0)
    assert len(est.best_sets(max_sets=31)) == 31
    assert est.best_sets(max_sets=31)[0] == (1,)


@pytest.mark.parametrize(
    "max_sets,sizes", [(78, {1, 2}), (77, {1}), (297, {1, 2}), (298, {1, 2, 3})]
)
def test_the_sizes_enumerated_are_those_whose_sets_fit_into_max_sets_together(max_sets, sizes):
    # 12 depots: 12 sets of 1, 66 of 2, 220 of 3 (78 and 298 together); below 10 depots a set
    # pays 5, so the greedy drop and the descent (from its end only: starts=0) never go below
    # 9 depots and every smaller set ranked comes from the enumeration
    weights = [0.30, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.18, 0.50, 0.40]
    est = Landscape(weights, min_size=10, penalty=5.0)
    ranked = est.best_sets(max_sets=max_sets, starts=0)
    counts = {k: sum(1 for s in ranked if len(s) == k) for k in range(1, 5)}
    full = {1: 12, 2: 66, 3: 220, 4: 495}
    assert counts == {k: (full[k] if k in sizes else 0) for k in range(1, 5)}


def test_an_equal_estimate_is_no_improvement():
    # every set costs 0: neither the greedy drop nor the descent moves from all depots, so
    # what is ranked is the enumerated sets of 1 and 2 depots, all depots and its drops
    est = Landscape([0.0] * 12, min_size=1, penalty=0.0)
    ranked = est.best_sets(max_sets=100, starts=0)
    assert sorted({len(s) for s in ranked}) == [1, 2, 11, 12]
    assert len(ranked) == 12 + 66 + 12 + 1


# ----------------------------------------------------------------- the large path's set
def small_depots_and_one_large(num_small: int = 25) -> CLRPInstance:
    """Three customers of demand 2; ``num_small`` depots of capacity 3 near them (two of them
    hold 6, the demand, yet only one customer each: any pair overloads the estimate's
    assignment) and one depot of capacity 6 (the last) far away."""
    rng = np.random.default_rng(0)
    return CLRPInstance(
        depot_locs=np.vstack([rng.random((num_small, 2)), [[50.0, 50.0]]]),
        customer_locs=rng.random((3, 2)),
        depot_capacity=np.array([3.0] * num_small + [6.0]),
        opening_cost=np.ones(num_small + 1),
        demand=np.full(3, 2.0),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )


def test_fits_tells_whether_the_estimates_assignment_keeps_the_capacities():
    instance = small_depots_and_one_large()
    est = SetEstimate(instance)
    for depots, fits in [((0, 1), False), ((0, 1, 2), True), ((25,), True), ((3, 25), True),
                         ((0,), False)]:  # fmt: skip
        assert est.fits(depots) is fits, depots
        assert (est.assignment(depots) is not None) is fits, depots
    assert math.isfinite(est((0, 1))) and est((0,)) == math.inf  # priced though it overloads


def test_a_set_is_made_to_fit_by_adding_the_depots_nearest_to_the_stranded_customers():
    instance = small_depots_and_one_large()
    est = SetEstimate(instance)
    made = est.fitting((0, 1))  # one of the two customers' depots overloads: one more depot
    assert len(made) == 3 and {0, 1} < set(made) and 25 not in made  # a near small one
    assert est.fits(made) and est.fitting(made) == made  # a fitting set stays as it is
    tight = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [1.0, 0.0]]),
        customer_locs=np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 1.0]]),
        depot_capacity=np.array([3.0, 3.0]),
        opening_cost=np.ones(2),
        demand=np.full(3, 2.0),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    assert SetEstimate(tight).fitting((0,)) is None  # even both depots hold one customer each


def large_path_routes(monkeypatch, instance, ranked) -> set[int]:
    """The depots of the assignment ``route_large`` routes when the ranking is ``ranked``."""
    monkeypatch.setattr(SetEstimate, "best_sets", lambda self, deadline=None: ranked)
    routed = []

    def by_parts(instance, assignment, seconds, route, max_iterations, seed, initial, clock):
        routed.append(assignment)
        return CLRPSolution([Route(int(d), (j,)) for j, d in enumerate(assignment)])

    monkeypatch.setattr(large, "route_by_parts", by_parts)
    deadline = Deadline(10.0, FakeClock())
    found = large.route_large(instance, deadline, None, 0, None, pyvrp_solver.route_on_set)
    [assignment] = routed
    assert set(found.open_depots) == set(assignment.tolist())
    return set(assignment.tolist())


def test_the_large_path_routes_the_cheaper_of_the_first_fitting_set_and_the_best_made_to_fit(
    monkeypatch,
):
    """Thirty pairs of small depots (each overloads) rank before {0, 25}, which fits but
    sends two customers to the far depot; {0, 1} made to fit (a third small depot) is cheaper
    by the estimate and is routed, not every depot. With a fitting set cheaper than that
    among the ranked ones, that set is routed."""
    instance = small_depots_and_one_large()
    est = SetEstimate(instance)
    pairs = list(itertools.combinations(range(25), 2))[:30]
    made = est.fitting(pairs[0])
    assert est(made) < est((0, 25))
    assert large_path_routes(monkeypatch, instance, [*pairs, (0, 25), (1, 25)]) <= set(made)
    cheaper = min((s for s in itertools.combinations(range(25), 3) if s != made), key=est)
    assert est(cheaper) < est(made)
    assert large_path_routes(monkeypatch, instance, [*pairs, cheaper]) <= set(cheaper)
    only_far = large_path_routes(monkeypatch, instance, [(0, 25)])  # fits: no repair needed
    assert only_far <= {0, 25}


# ------------------------------------------------------------------ late-acceptance history
@pytest.mark.parametrize(
    "clients, seconds, iterations, expected",
    [
        (600, 20.0, None, 66),  # 20 s x 4e5 / 600 = 13,333 expected iterations, / 200
        (400, 60.0, None, 300),  # 60,000 expected iterations: 300, PyVRP's own default
        (100, 600.0, None, 300),  # far more: never above the default
        (600, 0.2, None, 10),  # 133 iterations: at least 10
        (50, None, 5_000, 25),  # an iteration budget is known exactly
        (50, None, 100_000, 300),
        (600, 20.0, 4_000, 20),  # both: whichever ends the run first (4,000 iterations)
        (600, 3.0, 100_000, 10),  # 2,000 iterations expected in 3 s
        (1, 0.01, None, 20),  # one client: 4,000 iterations in 10 ms
    ],
)
def test_the_history_is_one_entry_per_200_expected_iterations_within_10_and_300(
    clients, seconds, iterations, expected
):
    assert pyvrp_solver.history_length(clients, seconds, iterations) == expected


def test_a_run_gets_the_history_of_its_budget_only_when_asked(monkeypatch):
    """``run_pyvrp(scaled_history=True)`` hands PyVRP the late-acceptance history of its budget
    (every other parameter PyVRP's default); without it PyVRP's defaults, history 300. Both
    runs return valid solutions."""
    from pyvrp.solve import SolveParams

    real_solve = pyvrp_solver.pyvrp.solve
    seen = []

    def solve(data, stop, **kwargs):
        seen.append((data.num_clients, kwargs["params"]))
        return real_solve(data, stop, **kwargs)

    monkeypatch.setattr(pyvrp_solver.pyvrp, "solve", solve)
    instance = two_clusters()
    enc = pyvrp_solver.encode(instance)
    pyvrp_solver.run_pyvrp(enc, None, max_iterations=3_000, seed=1, scaled_history=True).check(
        instance
    )
    pyvrp_solver.run_pyvrp(enc, None, max_iterations=3_000, seed=1).check(instance)
    pyvrp_solver.run_pyvrp(enc, 0.05, seed=1, scaled_history=True).check(instance)
    [(clients, scaled), (_, default), (_, timed)] = seen
    assert clients == 6
    assert scaled.ils.history_length == 15  # 3,000 iterations / 200
    assert default.ils.history_length == 300
    assert timed.ils.history_length == 16  # 0.05 s x 4e5 / 6 clients = 3,333 iterations
    defaults = SolveParams()
    for params in (scaled, default):
        assert params.ils.num_iters_no_improvement == defaults.ils.num_iters_no_improvement
        assert params.ils.exhaustive_on_best == defaults.ils.exhaustive_on_best
        assert params.penalty == defaults.penalty
        assert params.neighbourhood == defaults.neighbourhood
        assert params.operators == defaults.operators
        assert params.perturbation == defaults.perturbation


# ----------------------------------------------------------------------- nearly free depots
def row_of_depots(opening: float) -> CLRPInstance:
    """Two customers of demand 7 at (0, 10) and (0, 20), two depots at (0, 0) and (0, 30)
    opening for ``opening`` each; q = 10, F = 3. Two routes at least (14 / 10); the radial part
    is 2 (7 x 10 + 7 x 10) / 10 = 28 (each customer 10 from its nearest depot)."""
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [0.0, 30.0]]),
        customer_locs=np.array([[0.0, 10.0], [0.0, 20.0]]),
        depot_capacity=np.full(2, 20.0),
        opening_cost=np.full(2, opening),
        demand=np.full(2, 7.0),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=3.0,
        name="row",
    )


@pytest.mark.parametrize("opening, share", [(1.0, 2 / 36), (17.0, 34 / 68), (0.0, 0.0)])
def test_the_opening_share_by_hand(opening, share):
    """Both depots' opening costs over themselves + 2 routes x 3 + the radial part 28."""
    assert pyvrp_solver.opening_share(row_of_depots(opening)) == pytest.approx(share, rel=1e-12)


def test_the_opening_share_counts_whole_routes_and_each_customers_nearest_depot():
    """Three depots (D != N): customers of demand 5 and 5 fill exactly one route of q = 10
    (F = 3); their nearest depots are 10 away (depot 2 at (0, 100) is nearer to none): radial
    2 (5 x 10 + 5 x 10) / 10 = 20. Share 3 / (3 + 3 + 20)."""
    row = row_of_depots(1.0)
    three = dataclasses.replace(
        row,
        depot_locs=np.array([[0.0, 0.0], [0.0, 30.0], [0.0, 100.0]]),
        depot_capacity=np.full(3, 20.0),
        opening_cost=np.ones(3),
        demand=np.full(2, 5.0),
    )
    assert pyvrp_solver.opening_share(three) == pytest.approx(3 / 26, rel=1e-12)


def test_a_share_of_costs_below_one_unit_is_still_a_share():
    """Opening 0.2 each, customers at the depots, F = 0.1 for 2 routes: 0.4 / 0.6."""
    row = row_of_depots(0.2)
    tiny = dataclasses.replace(row, customer_locs=row.depot_locs, vehicle_fixed_cost=0.1)
    assert pyvrp_solver.opening_share(tiny) == pytest.approx(0.4 / 0.6, rel=1e-12)


def test_depots_are_nearly_free_up_to_five_percent_of_the_estimate():
    """2 x opening / (2 x opening + 34) <= 0.05 up to opening = 0.05 x 34 / (2 x 0.95)."""
    limit = 0.05 * 34 / (2 * 0.95)
    assert pyvrp_solver.nearly_free_depots(row_of_depots(limit * (1 - 1e-9)))
    exact = dataclasses.replace(row_of_depots(1.0), vehicle_fixed_cost=5.0)  # 2 / (2 + 10 + 28)
    assert pyvrp_solver.opening_share(exact) == 0.05
    assert pyvrp_solver.nearly_free_depots(exact)  # 5% itself is nearly free
    assert not pyvrp_solver.nearly_free_depots(row_of_depots(limit * 1.01))
    row = row_of_depots(0.0)  # every customer at a depot, no vehicle cost: nothing costs
    nothing_costs = dataclasses.replace(row, customer_locs=row.depot_locs, vehicle_fixed_cost=0.0)
    assert pyvrp_solver.opening_share(nothing_costs) == 0.0
    assert pyvrp_solver.nearly_free_depots(nothing_costs)


def test_nearly_free_depots_are_routed_all_at_once_in_one_run(fake_runs):
    """No ranking and no set moves: one route_on_set on every depot with the whole budget
    (the fleet 9/10, the trips the rest), both PyVRP runs with the history of their budget."""
    clock, calls = fake_runs
    RESULTS.extend([CLRPSolution([Route(0, (0,)), Route(1, (1,))])] * 2)
    found = depot_set_search(row_of_depots(0.1), 20.0, seed=3, clock=clock)
    assert [c[0] for c in calls] == ["fleet", "trips"]
    assert [c[1] for c in calls] == [pytest.approx(18.0), pytest.approx(2.0)]
    assert [c[3] for c in calls] == [3, 4]
    assert [r[1] for r in RUNS] == [[0, 1], [0, 1]] and HISTORIES == [True, True]
    assert found.open_depots == (0, 1)


def test_on_nearly_free_depots_a_cheaper_warm_start_is_kept(fake_runs):
    """Each customer from its own depot: 0.2 + 2 x 3 + 20 + 20 = 46.2; both from depot 0:
    0.1 + 6 + 20 + 40 = 66.1. The run is warm-started from the start either way."""
    instance = row_of_depots(0.1)
    clock, _ = fake_runs
    own = CLRPSolution([Route(0, (0,)), Route(1, (1,))])
    one = CLRPSolution([Route(0, (0,)), Route(0, (1,))])
    assert own.cost(instance).total == pytest.approx(46.2)
    assert one.cost(instance).total == pytest.approx(66.1)
    RESULTS.extend([one, one])
    assert depot_set_search(instance, 10.0, initial=own, clock=clock) is own
    assert RUNS[0][2] is own
    RUNS.clear()
    RESULTS.extend([own, own])
    assert depot_set_search(instance, 10.0, initial=one, clock=clock) is own
    assert RUNS[0][2] is one


def test_nearest_depots_are_those_nearest_to_some_customer():
    """Depots 2 and 3 are far from both clusters: only 0 and 1 are anyone's nearest."""
    assert pyvrp_solver.nearest_depots(two_clusters()) == (0, 1)


def test_nearest_depots_short_of_capacity_get_the_depot_nearest_to_the_stranded_customers():
    """Depots 0 and 1 hold 3 + 2 < 6 units: one more depot, depot 2 (about 400 from either
    cluster; depot 3 moved 800 away)."""
    short = dataclasses.replace(
        two_clusters(),
        depot_locs=np.array([[0.0, 0.0], [100.0, 0.0], [50.0, 400.0], [-800.0, 50.0]]),
        depot_capacity=np.array([3.0, 2.0, 100.0, 100.0]),
    )
    assert pyvrp_solver.nearest_depots(short) == (0, 1, 2)


def test_nearest_depots_are_every_depot_when_no_set_fits():
    """Two customers of demand 2 nearest to depot 0 (room 3) and one to depot 1 (room 3); the
    far depot 2 holds 1: the estimate's assignment never fits, so every depot."""
    tight = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [1.0, 0.0], [50.0, 50.0]]),
        customer_locs=np.array([[0.0, 1.0], [1.0, 1.0], [0.4, 1.0]]),
        depot_capacity=np.array([3.0, 3.0, 1.0]),
        opening_cost=np.ones(3),
        demand=np.full(3, 2.0),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    assert SetEstimate(tight).fitting((0, 1)) is None
    assert pyvrp_solver.nearest_depots(tight) == (0, 1, 2)


def test_nearly_free_depots_are_routed_on_the_nearest_depots_and_the_warm_starts(fake_runs):
    """Opening 0.01 each (share about 0.6%, nearly free): one run on depots 0 and 1, the
    nearest; a warm start from depot 3 adds depot 3."""
    cheap = dataclasses.replace(two_clusters(), opening_cost=np.full(4, 0.01))
    assert pyvrp_solver.nearly_free_depots(cheap)
    clock, _ = fake_runs
    found = depot_set_search(cheap, 10.0, clock=clock)
    assert [r[1] for r in RUNS] == [[0, 1], [0, 1]] and found.open_depots == (0, 1)
    RUNS.clear()
    far = CLRPSolution([Route(3, tuple(range(3))), Route(1, (3, 4, 5))])
    depot_set_search(cheap, 10.0, initial=far, clock=clock)
    assert [r[1] for r in RUNS] == [[0, 1, 3], [0, 1, 3]] and RUNS[0][2] is far


def test_on_nearly_free_depots_an_iteration_budget_is_split_like_a_time_budget(fake_runs):
    """100 iterations: the fleet 90, the trips 10 (POLISH_SHARE), no time limit."""
    cheap = dataclasses.replace(two_clusters(), opening_cost=np.full(4, 0.01))
    clock, calls = fake_runs
    depot_set_search(cheap, None, max_iterations=100, seed=2, clock=clock)
    assert [c[:4] for c in calls] == [("fleet", None, 90, 2), ("trips", None, 10, 3)]


def test_on_nearly_free_depots_a_warm_start_as_cheap_as_the_run_is_kept(fake_runs):
    """Nothing beats the warm start when the run finds an equally cheap solution."""
    cheap = dataclasses.replace(two_clusters(), opening_cost=np.full(4, 0.01))
    clock, _ = fake_runs
    start = spread((0, 1), 6)
    same = spread((0, 1), 6)
    assert same is not start and same.cost(cheap).total == start.cost(cheap).total
    RESULTS.extend([same, same])
    assert depot_set_search(cheap, 10.0, initial=start, clock=clock) is start


# -------------------------------------------------------------------------- the time left
def __call__(self) -> float:
    self.now += 1.0
    return self.now


def test_route_on_set_the_fallback_trips_get_the_time_left_even_below_a_second(fake_runs):
    # 1 s: the fleet's 0.9 s with a give-up after 0.45 s finds nothing; the trips get 0.55 s
    clock, calls = fake_runs
    RESULTS[:] = [None, CHEAP]
    assert route_on_set(two_clusters(), (0, 1), 1.0, clock=clock) is CHEAP
    assert calls == [
        ("fleet", pytest.approx(0.9), None, 0), ("trips", pytest.approx(0.55), None, 0)
    ]  # fmt: skip


def test_route_on_set_the_fallback_trips_run_gets_the_scaled_history_too(fake_runs):
    clock, _ = fake_runs
    RESULTS[:] = [None, CHEAP]
    route_on_set(two_clusters(), (0, 1), 10.0, clock=clock, scaled_history=True)
    assert [r[0] for r in RUNS] == ["fleet", "trips"] and HISTORIES == [True, True]


def test_route_on_set_keeps_the_fleets_result_when_the_polish_only_ties_it(fake_runs):
    """The trips polish starts from the fleet's result: one as costly is no improvement."""
    clock, _ = fake_runs
    tie = CLRPSolution(list(CHEAP.routes))
    RESULTS[:] = [CHEAP, tie]
    assert route_on_set(two_clusters(), (0, 1), 10.0, clock=clock) is CHEAP
    RESULTS[:] = [DEAR, tie]  # cheaper: the polish's
    assert route_on_set(two_clusters(), (0, 1), 10.0, clock=clock) is tie


# -------------------------------------------------------------- depot_set_search's runs
def test_the_search_is_seeded_with_zero_by_default(monkeypatch):
    """Seed 0: the first run 0, candidate k seed k, the last run 10,007."""
    _, calls, _ = scripted_search(monkeypatch, eight_depots(), lambda k: +1.0)
    assert [c[1] for c in calls] == [0, *range(1, 17), 10_007]


def test_from_large_instance_customers_on_the_search_takes_the_large_path(monkeypatch):
    """At exactly LARGE_INSTANCE customers (6 here) the large path gets the whole call, the
    warm start and the clock included; one customer fewer than the threshold, it does not."""
    instance, start, clock = two_clusters(), spread((0, 1), 6), FakeClock()
    seen = []
    monkeypatch.setattr(pyvrp_solver, "route_large", lambda *args: seen.append(args) or start)
    monkeypatch.setattr(pyvrp_solver, "LARGE_INSTANCE", 6)
    assert depot_set_search(instance, 10.0, 50, seed=3, initial=start, clock=clock) is start
    [(got, deadline, iterations, seed, initial, route, params)] = seen
    assert got is instance and (deadline.seconds, iterations, seed) == (10.0, 50, 3)
    assert initial is start and deadline.clock is clock
    assert route is pyvrp_solver.route_on_set and params == SetSearchParams()
    monkeypatch.setattr(pyvrp_solver, "LARGE_INSTANCE", 7)
    monkeypatch.setattr(pyvrp_solver, "route_on_set", lambda *a, **k: None)
    assert depot_set_search(instance, None, 50) is None and len(seen) == 1


def test_every_run_of_the_first_set_and_its_fallbacks_gets_the_first_share_and_the_warm_start(
    monkeypatch,
):
    """The warm start's set (0, 2) and then the next ranked sets find nothing; every one of
    these runs, the last one on all depots included, gets 15% of 10 s from the warm start."""
    instance, start = two_clusters(), spread((0, 2), 6)
    calls = []

    def route(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
              polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        calls.append((tuple(sorted(depots)), seconds, initial))
        return spread(depots, 6) if len(depots) == 4 else None

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    depot_set_search(instance, 10.0, initial=start, clock=FakeClock())
    first_runs = calls[: 1 + next(k for k, c in enumerate(calls) if len(c[0]) == 4)]
    assert first_runs[0][0] == (0, 2) and first_runs[-1][0] == (0, 1, 2, 3)
    assert len(first_runs) >= 3  # a ranked set besides the warm start's was tried
    for depots, seconds, initial in first_runs:
        assert seconds == pytest.approx(1.5) and initial is start, depots


def test_a_search_ended_by_the_rankings_time_leaves_its_unrun_iterations_to_the_last_run(
    monkeypatch,
):
    """The case of ``test_ranking_out_of_time_ends_the_search_with_its_best_set`` with 1,000
    iterations too: no candidate ran, so the last run gets every iteration but the first
    run's 150 (850, more than its 20%)."""
    clock, calls = TickingClock(), []

    def route(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
              polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        calls.append((tuple(sorted(depots)), max_iterations))
        clock.now += 84.0 if len(calls) == 1 else 0.0
        return spread(depots, 6)

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    depot_set_search(two_clusters(), 100.0, 1000, clock=clock)
    assert calls == [((0, 1), 150), ((0, 1), 850)]


def test_the_candidates_run_in_increasing_order_of_estimate(fake_sets):
    clock, calls = fake_sets
    depot_set_search(two_clusters(), seconds=None, max_iterations=1000, clock=clock)
    est = SetEstimate(two_clusters())
    estimates = [est(c[0]) for c in calls[1:-1]]
    assert len(estimates) == 8 and estimates == sorted(estimates)
    assert calls[1][0] in {(0, 1, 2), (0, 1, 3)}  # an add: far from the drop / swap / add order


def test_a_candidate_must_beat_the_best_by_more_than_1e_9(monkeypatch):
    """A first candidate cheaper by exactly 1e-9 is no improvement: the search goes on around
    the first set and the last run is on it; cheaper by 2e-9, it is the new best set."""
    instance = eight_depots()
    found, calls, costs = scripted_search(
        monkeypatch, instance, lambda k: -1e-9 if k == 1 else +1.0
    )
    assert calls[-1][0] == calls[0][0] and costs(instance, found) == 100.0
    found, calls, costs = scripted_search(
        monkeypatch, instance, lambda k: -2e-9 if k == 1 else +1.0
    )
    assert calls[-1][0] == calls[1][0] and costs(instance, found) == 100.0 - 2e-9


def test_the_set_a_better_solution_opened_is_not_run_again(monkeypatch):
    """The run on (0, 1, 2) improves with a solution on (0, 2) alone: the search moves to
    (0, 2), then improves on (0,); (0, 2), an add move of (0,), was routed already."""
    instance = two_clusters()
    costs = Costs(instance)
    monkeypatch.setattr(set_search, "solution_cost", costs)
    calls = []

    def route(instance, depots, seconds, max_iterations=None, seed=0, initial=None,
              polish_share=POLISH_SHARE, clock=None):  # fmt: skip
        depots = tuple(sorted(depots))
        calls.append(depots)
        if len(calls) == 1:
            return costs.new(depots, 100.0)
        if polish_share:  # the last run finds nothing better
            return None
        better = {(0, 1, 2): ((0, 2), 99.0), (0,): ((0,), 98.0)}
        opened, cost = better.get(depots, (depots, 200.0))
        return costs.new(opened, cost)

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    found = depot_set_search(instance, None, 1000, params=SetSearchParams(eval_share=0.01))
    assert calls[0] == (0, 1) and (0, 1, 2) in calls and (0,) in calls
    assert costs(instance, found) == 98.0
    candidates = calls[1:-1]
    assert (0, 2) not in candidates and len(set(candidates)) == len(candidates)


# ------------------------------------------------------------------ the set estimate
def test_a_set_is_still_estimated_at_the_deadline_itself():
    """``stop_at``: no new set once the clock *passes* the deadline."""
    clock = FakeClock(0.0)
    est = SetEstimate(two_clusters())
    est.stop_at(Deadline(5.0, clock))
    clock.now = 5.0
    assert np.isfinite(est((2, 3)))
    clock.now = 5.0 + 1e-6
    with pytest.raises(OutOfTime):
        est((1, 2))


def test_with_two_depots_customers_give_way_by_regret_not_by_their_order():
    """The instance of ``test_an_overloaded_nearest_depot_gives_way_by_regret`` with the
    customers listed in another order: regrets 0.2, 4 and 2; customers 1 and 2 stay at depot
    0 (capacity 2), customer 0 moves to depot 1."""
    instance = overloaded_nearest_depot([2.9, 1.0, 2.0])
    est = SetEstimate(instance)
    assert est.assignment((0, 1)).tolist() == [1, 0, 0]
    assert est((0, 1)) == pytest.approx(2 * (1 + 2) / 10 + 2 * 3.1 / 10, rel=1e-12)


def test_a_customer_without_room_anywhere_goes_to_the_roomiest_depot():
    """Depot 0 holds 3, depot 1 4.5; customers of demand 2, 3 and 2 nearest to depot 0
    (regrets 8, 6, 4, in that order): the first stays (room 1 left), the second moves to
    depot 1 (room 1.5 left), the third fits nowhere and joins the roomier one, depot 1."""
    instance = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
        customer_locs=np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]]),
        depot_capacity=np.array([3.0, 4.5]),
        opening_cost=np.zeros(2),
        demand=np.array([2.0, 3.0, 2.0]),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=0.0,
    )
    est = SetEstimate(instance)
    assert est._assign(est.dist, est.capacity).tolist() == [0, 1, 1]
    assert not est.fits((0, 1))


def test_ties_in_regret_and_in_distance_are_broken_by_index():
    """The assignment is the same on every machine (stable sorts). Regret ties: customers 2
    and 3 (regret 8) go first, then 0 and 1 (regret 2) in that order; depot 0 (capacity 6)
    has room for customer 0 (demand 1) but then not for customer 1 (demand 2). Distance ties:
    depots 2 and 3 stand at one point; the lower-numbered one is tried first."""
    regret = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
        customer_locs=np.array([[4.0, 0.0], [4.0, 0.0], [1.0, 0.0], [1.0, 0.0]]),
        depot_capacity=np.array([6.0, 20.0]),
        opening_cost=np.ones(2),
        demand=np.array([1.0, 2.0, 2.0, 2.0]),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    assert SetEstimate(regret).assignment((0, 1)).tolist() == [0, 1, 0, 0]
    distance = CLRPInstance(
        depot_locs=np.array([[10.0, 0.0], [10.0, 0.0], [0.0, 0.0], [0.0, 0.0]]),
        customer_locs=np.array([[1.0, 0.0], [1.0, 0.0]]),
        depot_capacity=np.array([10.0, 10.0, 1.0, 1.0]),
        opening_cost=np.ones(4),
        demand=np.ones(2),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    assert SetEstimate(distance).assignment((0, 1, 2, 3)).tolist() == [2, 3]


def test_a_room_short_of_a_demand_by_at_most_1e_9_still_takes_it():
    """Depot 0 holds 1 - 1e-9, within the capacity tolerance of a demand of 1 (a route of
    customer 0 from it is valid): customer 0 (regret 8) stays there and customer 1 moves."""
    instance = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
        customer_locs=np.array([[1.0, 0.0], [4.0, 0.0]]),
        depot_capacity=np.array([1.0 - 1e-9, 10.0]),
        opening_cost=np.ones(2),
        demand=np.array([1.0, 0.5]),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    CLRPSolution([Route(0, (0,)), Route(1, (1,))]).check(instance)
    assert SetEstimate(instance).assignment((0, 1)).tolist() == [0, 1]


def test_a_load_within_1e_9_of_the_capacity_fits():
    """One customer nearest to depot 0: a load of capacity + 1e-9 fits (the solution is
    valid), and a set short of the total demand by 1e-9 is priced, not infinite."""
    over = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
        customer_locs=np.array([[1.0, 0.0]]),
        depot_capacity=np.array([0.5, 10.0]),
        opening_cost=np.ones(2),
        demand=np.array([0.5 + 1e-9]),
        vehicle_capacity=1.0,
        vehicle_fixed_cost=1.0,
    )
    CLRPSolution([Route(0, (0,))]).check(over)
    est = SetEstimate(over)
    assert est.fits((0,)) and est.assignment((0,)).tolist() == [0]
    assert est.fitting((0,)) == (0,)
    short = dataclasses.replace(over, depot_capacity=np.array([1.0 - 1e-9, 10.0]),
                                demand=np.array([1.0]))  # fmt: skip
    CLRPSolution([Route(0, (0,))]).check(short)
    assert SetEstimate(short)((0,)) == pytest.approx(1 + 1 + 2 * 1.0 * 1.0 / 1.0)


def test_a_set_is_made_to_fit_by_the_closed_depot_nearest_to_the_stranded_customers_only():
    """Depots 0 and 1 (capacity 2 each) for five customers of demand 1: three above depot 0,
    two above depot 1. The greedy assignment overloads depot 0 with customers 0, 1 and 2.
    Of the closed depots, 3 is nearest to those three (summed distances 9), 4 to all five
    customers; 2, the first closed one, is far from all of them: depot 3 is added."""
    instance = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0], [5.0, 50.0], [0.0, 5.0], [5.0, 1.5]]),
        customer_locs=np.array([[0.0, 1.0], [0.0, 2.0], [0.0, 3.0], [10.0, 1.0], [10.0, 2.0]]),
        depot_capacity=np.array([2.0, 2.0, 10.0, 10.0, 10.0]),
        opening_cost=np.ones(5),
        demand=np.ones(5),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    dist = instance.depot_customer_costs()
    assert dist[3, :3].sum() < dist[4, :3].sum() < dist[2, :3].sum()
    assert dist[4].sum() < dist[3].sum()
    assert SetEstimate(instance).fitting((0, 1)) == (0, 1, 3)


def test_the_location_model_gets_its_share_of_the_time_left_and_none_at_the_deadline(
    monkeypatch,
):
    asked = []
    monkeypatch.setattr(set_estimate, "facility_location_set",
                        lambda instance, seconds: asked.append(seconds) or (0, 1))  # fmt: skip
    clock = FakeClock()
    est = SetEstimate(two_clusters())
    est.stop_at(Deadline(1.0, clock))
    assert est.located_set() == (0, 1) and asked == [pytest.approx(0.7)]  # 70% of 1 s
    est.stop_at(Deadline(0.0, clock))  # no time left: the model is not solved
    assert est.located_set() is None and len(asked) == 1
    est.stop_at(None)  # no deadline: node-limited
    assert est.located_set() == (0, 1) and asked[-1] is None


# ------------------------------------------------------------------- the ranking's moves
@pytest.mark.parametrize("max_sets, starts", [(3, 0), (4, 1)])
def test_the_greedy_drop_and_the_descents_estimate_exactly_their_moves(max_sets, starts):
    """Weights 0.4, 0.3, 0.2 and 0.1 (a set costs their sum). The greedy drop from all
    depots drops the dearest depot each time (every drop improves, by less than 1): all,
    its four drops, the three drops of (1, 2, 3), the two of (2, 3), ending at (3,). The
    descent from (3,) (or from the best set estimated by then, (3,) again, with starts=1 and
    the singletons enumerated) adds its swaps (0,), (1,), (2,) and adds (0, 3), (1, 3),
    (2, 3), and stops. (0, 1) and (0, 2) are never estimated."""
    est = Landscape([0.4, 0.3, 0.2, 0.1], min_size=1, penalty=0.0)
    ranked = est.best_sets(max_sets=max_sets, starts=starts)
    every = {s for k in range(1, 5) for s in itertools.combinations(range(4), k)}
    assert set(ranked) == every - {(0, 1), (0, 2)}
    assert ranked[0] == (3,)


def test_the_descents_start_from_the_three_best_sets_by_default():
    """Weights 5, 4, 3, 2, 1; the five singletons enumerated (max_sets=5). The greedy drop
    ends at (4,) having estimated all, its drops, the triples of (1, 2, 3, 4) and the pairs
    of (2, 3, 4). The three best sets by then are (4,), (3,) and (2,) ((3, 4) ties with (2,)
    and comes after it); their descents add their adds (0, 4), (1, 4), (0, 3), (1, 3),
    (0, 2) and (1, 2): every pair but (0, 1). A fourth start, (3, 4), would add (0, 3, 4)."""
    est = Landscape([5.0, 4.0, 3.0, 2.0, 1.0], min_size=1, penalty=0.0)
    ranked = est.best_sets(max_sets=5)
    pairs = {s for s in itertools.combinations(range(5), 2) if s != (0, 1)}
    triples = {(1, 2, 3), (1, 2, 4), (1, 3, 4), (2, 3, 4)}
    quads = set(itertools.combinations(range(5), 4))
    expected = {(d,) for d in range(5)} | pairs | triples | quads | {tuple(range(5))}
    assert set(ranked) == expected and ranked[0] == (4,)


def test_an_improvement_of_exactly_1e_12_does_not_move_the_descent():
    """Every set costs 0 but (0,), -1e-12. Nothing is enumerated (max_sets=2), the greedy drop
    stops at all depots; the descent from the best set by then, (0, 1), sees (0,) at exactly
    its estimate - 1e-12 and stops, so (2,), a swap of (0,), is never estimated."""
    est = Landscape([0.0, 0.0, 0.0], min_size=1, penalty=0.0, bonus={(0,): 1e-12})
    ranked = est.best_sets(max_sets=2, starts=1)
    assert set(ranked) == {(0, 1, 2), (1, 2), (0, 2), (0, 1), (0,), (1,)}


@pytest.mark.parametrize("num_depots, model_first", [(15, True), (14, False)])
def test_from_fifteen_depots_the_model_is_solved_once_before_the_greedy_drop(
    num_depots, model_first
):
    """Unit weights: the single depots are enumerated (max_sets=100), then the greedy drop
    runs all the way down. From MODEL_FIRST_DEPOTS depots the model is solved right after
    the enumeration, below it after the descents; once either way."""
    seen = []

    class Recording(Landscape):
        def located_set(self):
            seen.append(len(self._cache))
            return None

    Recording([1.0] * num_depots, min_size=1, penalty=0.0).best_sets(max_sets=100)
    assert len(seen) == 1
    assert (seen[0] == num_depots) is model_first


def test_by_default_at_most_1100_sets_are_enumerated():
    """1,101 depots: their 1,101 single-depot sets are more than the default 1,100, so none is
    enumerated. Every weight is -1: no drop improves; all depots and its drops are ranked."""
    est = Landscape([-1.0] * 1101, min_size=1, penalty=0.0)
    ranked = est.best_sets(starts=0)
    assert len(ranked) == 1 + 1101 and all(len(s) >= 1100 for s in ranked)


def test_a_ranking_stopped_by_its_time_logs_it(caplog):
    import logging

    with caplog.at_level(logging.DEBUG, logger="clrp_rl4co.solvers.set_estimate"):
        SetEstimate(two_clusters()).best_sets(deadline=Deadline(3.5, TickingClock()))
    messages = [r.getMessage() for r in caplog.records]
    assert any("depot-set ranking stopped after 3.5 s" in m for m in messages), messages


# ---------------------------------------------------------------- the search's moves
def test_swaps_try_the_closed_depots_nearest_to_the_dropped_one_first():
    """Depot 0 at x = 10 is open; depots 2, 3 and 1 stand 1, 2 and 3 away. Without an
    estimate the moves come drops (none: depot 0 is alone), swaps nearest first, adds."""
    instance = CLRPInstance(
        depot_locs=np.array([[10.0, 0.0], [13.0, 0.0], [11.0, 0.0], [8.0, 0.0]]),
        customer_locs=np.array([[0.0, 5.0]]),
        depot_capacity=np.full(4, 10.0),
        opening_cost=np.ones(4),
        demand=np.ones(1),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    assert set_search.neighbour_sets(instance, (0,)) == [
        (2,), (3,), (1,), (0, 1), (0, 2), (0, 3)
    ]  # fmt: skip


def test_a_move_with_exactly_the_total_demand_of_capacity_is_kept():
    """Four depots of capacity 2, four units of demand: a pair holds exactly enough."""
    instance = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]]),
        customer_locs=np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [3.0, 1.0]]),
        depot_capacity=np.full(4, 2.0),
        opening_cost=np.ones(4),
        demand=np.ones(4),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    pairs_of = sorted(set_search.neighbour_sets(instance, (0, 1)))
    assert pairs_of == [(0, 1, 2), (0, 1, 3), (0, 2), (0, 3), (1, 2), (1, 3)]  # no drop
    triple_of = sorted(set_search.neighbour_sets(instance, (0, 1, 2)))
    assert triple_of == [(0, 1), (0, 1, 2, 3), (0, 1, 3), (0, 2), (0, 2, 3), (1, 2), (1, 2, 3)]


# ------------------------------------------------------------------- the large path
def tight_everywhere() -> CLRPInstance:
    """Three customers of demand 2; depots of capacity 3, 3 and 1 (7 in all): no depot holds
    two customers, so no set's greedy assignment fits, all depots' neither."""
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [1.0, 0.0], [50.0, 50.0]]),
        customer_locs=np.array([[0.0, 1.0], [1.0, 1.0], [0.4, 1.0]]),
        depot_capacity=np.array([3.0, 3.0, 1.0]),
        opening_cost=np.ones(3),
        demand=np.full(3, 2.0),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
        name="tight",
    )


@pytest.fixture
def large_path(monkeypatch):
    """``route_large`` with a ranking that takes 2 s on a fake clock and ``route_by_parts``
    replaced: it records its arguments and returns the next of ``found`` (else a
    solution of one route per customer on the assignment)."""
    clock, seen, found, rankers = FakeClock(), [], [], []
    real = SetEstimate.best_sets

    def timed(self, *args, **kwargs):
        deadline = kwargs.get("deadline")
        rankers.append(None if deadline is None else deadline.clock)
        clock.now += 2.0
        return real(self, *args, **kwargs)

    def by_parts(instance, assignment, seconds, route, max_iterations, seed, initial, clock):
        seen.append((instance, assignment.tolist(), seconds, route, max_iterations, seed,
                     initial, clock))  # fmt: skip
        if found:
            return found.pop(0)
        return CLRPSolution([Route(int(d), (j,)) for j, d in enumerate(assignment)])

    monkeypatch.setattr(SetEstimate, "best_sets", timed)
    monkeypatch.setattr(large, "route_by_parts", by_parts)

    def search(instance, seconds, max_iterations=None, seed=0, initial=None):
        return large.route_large(instance, Deadline(seconds, clock), max_iterations, seed,
                                      initial, pyvrp_solver.route_on_set)  # fmt: skip

    return search, clock, seen, found, rankers


def test_the_large_path_routes_the_ranked_set_by_parts_on_the_time_left(large_path):
    search, clock, seen, _, rankers = large_path
    instance = two_clusters()
    found = search(instance, 10.0, 50, seed=7)
    [(got, assignment, seconds, route, iterations, seed, initial, its_clock)] = seen
    assert got is instance and assignment == [0, 0, 0, 1, 1, 1]  # the best set, (0, 1)
    assert seconds == pytest.approx(8.0)  # 10 s less the ranking's 2 s
    assert route is pyvrp_solver.route_on_set and (iterations, seed) == (50, 7)
    assert initial is None and its_clock is clock
    assert rankers == [clock]  # the ranking measures its time on the same clock
    assert found.open_depots == (0, 1)
    search(instance, None, 50)
    assert seen[-1][2] is None  # no time budget


def test_the_large_path_keeps_a_warm_starts_assignment_and_the_warm_start_unless_beaten(
    large_path,
):
    """A warm start fixes the assignment (no ranking) and is handed to the parts; it is
    returned when the parts cost as much or more, else their solution is."""
    search, clock, seen, found, rankers = large_path
    instance = two_clusters()
    start = CLRPSolution([Route(1, (0, 2)), Route(0, (1,)), Route(3, (3, 4, 5))])
    start.check(instance)
    far = CLRPSolution([Route(2, (j,)) for j in range(6)])
    same = CLRPSolution(list(start.routes))
    assert far.cost(instance).total > start.cost(instance).total > CHEAP.cost(instance).total
    found[:] = [far, same, CHEAP]
    assert search(instance, 10.0, 50, seed=7, initial=start) is start  # dearer
    [(_, assignment, seconds, _, _, _, initial, _)] = seen
    assert assignment == [1, 0, 1, 3, 3, 3] and initial is start
    assert seconds == pytest.approx(10.0) and rankers == []
    assert search(instance, 10.0, initial=start) is start  # as cheap
    assert search(instance, 10.0, initial=start) is CHEAP  # cheaper


def test_the_large_path_routes_every_depots_assignment_when_nothing_is_ranked(
    large_path, monkeypatch
):
    search, _, seen, _, _ = large_path
    instance = two_clusters()
    monkeypatch.setattr(SetEstimate, "best_sets", lambda self, deadline=None: [])
    search(instance, 10.0)
    assert seen[0][1] == [0, 0, 0, 1, 1, 1]  # each customer's nearest depot


def test_the_large_path_makes_the_best_set_fit_when_no_ranked_set_fits(monkeypatch):
    instance = small_depots_and_one_large()
    pairs = list(itertools.combinations(range(25), 2))[:30]  # each overloads
    made = SetEstimate(instance).fitting(pairs[0])
    assert large_path_routes(monkeypatch, instance, pairs) <= set(made)


def test_the_large_path_without_a_fitting_assignment_runs_pyvrp_on_every_depot(
    large_path, monkeypatch, caplog
):
    import logging

    search, clock, seen, _, _ = large_path
    instance = tight_everywhere()
    calls = []
    result = spread((0, 1, 2), 3)

    def route(*args, **kwargs):
        calls.append((args, kwargs))
        return result

    monkeypatch.setattr(pyvrp_solver, "route_on_set", route)
    with caplog.at_level(logging.INFO, logger="clrp_rl4co.solvers.set_search"):
        assert search(instance, 10.0, 50, seed=7) is result
    assert seen == []  # no routing by parts
    [((got, depots, seconds, iterations, seed), kwargs)] = calls
    assert got is instance and list(depots) == [0, 1, 2]
    assert seconds == pytest.approx(8.0) and (iterations, seed) == (50, 7)
    assert kwargs == {"clock": clock}
    messages = [r.getMessage() for r in caplog.records]
    assert any(
        m.startswith("tight: no depot set whose assignment fits") and "PyVRP on every depot" in m
        for m in messages
    ), messages
