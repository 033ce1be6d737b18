"""The depot-set search (:mod:`clrp_rl4co.solvers.set_search`) from its documented rules, with a
recording ``route`` in place of PyVRP: the restricted-set polish only *below* its customer
count, ``initial`` kept when nothing beats it, and the large path's ranking time taken from the
given parameters."""

from __future__ import annotations

import numpy as np
import pytest
from clocks import FakeClock

from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route
from clrp_rl4co.solvers import large
from clrp_rl4co.solvers.large import large_assignment
from clrp_rl4co.solvers.set_search import (
    LAST_RUN_SEED,
    SetSearch,
    SetSearchParams,
    fleet_restricts,
    search_sets,
)
from clrp_rl4co.solvers.stopping import Budget, Deadline


def tight() -> CLRPInstance:
    """Four customers of demand 1.5 (6 in all), vehicles of 4 (two routes needed); two depots
    of capacity 7: one depot holds the demand but only one full vehicle (7 // 4), so the fleet
    restricts every one-depot set."""
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
        customer_locs=np.array([[0.0, 1.0], [1.0, 0.0], [10.0, 1.0], [9.0, 0.0]]),
        depot_capacity=np.full(2, 7.0),
        opening_cost=np.ones(2),
        demand=np.full(4, 1.5),
        vehicle_capacity=4.0,
        vehicle_fixed_cost=1.0,
        name="tight",
    )


def recording_route(calls: list, answer=lambda seed, polish_share: None):
    def route(instance, depots, seconds, iterations, seed, warm=None, polish_share=0.0,
              clock=None):  # fmt: skip
        calls.append((tuple(depots), seconds, iterations, seed, polish_share))
        return answer(seed, polish_share)

    return route


@pytest.mark.parametrize("threshold, polished", [(4, False), (5, True)])
def test_a_restricted_set_is_polished_only_below_the_customer_count(threshold, polished):
    """``restricted_polish_customers``: *below* this many customers a set the fleet restricts
    is compared after the trips polish; at exactly the count (4 customers) it is not."""
    instance = tight()
    assert fleet_restricts(instance, [0])
    calls: list = []
    params = SetSearchParams(restricted_polish_customers=threshold, polish_share=0.3)
    search = SetSearch(instance, Deadline(None), 100, 0, recording_route(calls), params)
    search.run_set((0,), Budget(None, 10), 7, None)
    assert calls == [((0,), None, 10, 7, 0.3 if polished else 0.0)]


def test_a_run_never_gets_more_seconds_than_the_search_has_left():
    """A set's share of the search's 100 s is 30 s, but only 4 s of the search are left: the
    run gets 4 s (its deadline would fall after the search's otherwise); a share that fits
    stays as it is."""
    instance = tight()
    clock, calls = FakeClock(), []
    search = SetSearch(instance, Deadline(100.0, clock), None, 0, recording_route(calls),
                       SetSearchParams())  # fmt: skip
    search.run_set((0, 1), Budget(3.0, None), 1, None)
    clock.now += 96.0
    search.run_set((0, 1), Budget(30.0, None), 2, None)
    assert [c[1] for c in calls] == [3.0, pytest.approx(4.0)]


def test_the_initial_solution_is_kept_when_the_last_run_only_ties_it():
    """Nothing beats ``initial``: every run finds nothing but the last, which finds a
    different solution of exactly its cost; ``initial`` is kept."""
    instance = tight()
    initial = CLRPSolution([Route(0, (0, 1)), Route(1, (2, 3))])
    tie = CLRPSolution([Route(1, (3, 2)), Route(0, (1, 0))])  # the same routes reversed
    assert tie != initial and tie.cost(instance).total == initial.cost(instance).total
    calls: list = []

    def answer(seed, polish_share):
        return tie if seed == 5 + LAST_RUN_SEED else None

    found = search_sets(instance, Deadline(None, FakeClock()), 100, 5, initial,
                        recording_route(calls, answer))  # fmt: skip
    assert calls[-1][3] == 5 + LAST_RUN_SEED  # the last run did happen
    assert found is initial


def test_the_large_ranking_gets_the_time_of_the_given_parameters(monkeypatch):
    """The ranking gets :func:`large_ranking_seconds` of the time left under the parameters
    passed in: on a small instance the model's need is tiny, so ``ranking_share`` of the
    100 s left, 2 s (not the default share's 10 s)."""
    ranking: list = []

    class Estimate:
        def __init__(self, instance):
            self.n = instance.num_customers

        def best_sets(self, deadline=None):
            ranking.append(deadline.seconds)
            return [(0,)]

        def fits(self, depots):
            return True

        def fitting(self, depots):
            return None

        def __call__(self, depots):
            return 0.0

        def assignment(self, depots):
            return np.zeros(self.n, np.int64)

    monkeypatch.setattr(large, "SetEstimate", Estimate)
    params = SetSearchParams(ranking_share=0.02, large_ranking_share=0.5)
    found = large_assignment(tight(), Deadline(100.0, FakeClock()), params)
    assert found.tolist() == [0, 0, 0, 0]
    assert ranking == [pytest.approx(2.0)]
