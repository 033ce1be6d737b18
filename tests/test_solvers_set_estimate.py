"""The depot-set estimate (:class:`clrp_rl4co.solvers.set_estimate.SetEstimate`) from its
documented rules: the ranking parameters it is given, and the greedy drop that takes a drop only
when it improves the estimate by more than float noise (1e-12)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from clocks import FakeClock

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.solvers import set_estimate
from clrp_rl4co.solvers.set_estimate import PARAMS, RankingParams, SetEstimate
from clrp_rl4co.solvers.stopping import Deadline


def line() -> CLRPInstance:
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
        customer_locs=np.array([[1.0, 0.0], [9.0, 0.0]]),
        depot_capacity=np.full(2, 10.0),
        opening_cost=np.ones(2),
        demand=np.ones(2),
        vehicle_capacity=5.0,
        vehicle_fixed_cost=1.0,
        name="line",
    )


def test_the_ranking_parameters_are_the_given_ones_else_the_modules():
    params = RankingParams(max_sets=7, starts=1)
    assert SetEstimate(line(), params).params is params
    assert SetEstimate(line()).params is PARAMS


class Table(SetEstimate):
    """A :class:`SetEstimate` whose estimate is a table (only the drop is under test)."""

    def __init__(self, values: dict[tuple[int, ...], float], num_depots: int) -> None:
        self.values, self.num_depots = values, num_depots
        self._cache, self._deadline, self.params = {}, None, PARAMS

    def __call__(self, depots) -> float:
        return self.values.get(tuple(sorted(depots)), float("inf"))


def test_the_greedy_drop_takes_only_drops_that_improve_by_more_than_noise():
    """From {0, 1}: dropping depot 1 improves by exactly 1e-12 (noise: not taken); with an
    improvement of 1e-9 it is taken."""
    noise = Table({(0, 1): 1.0, (0,): 1.0 - 1e-12, (1,): 2.0}, 2)
    assert noise._greedy_drop() == (0, 1)
    real = Table({(0, 1): 1.0, (0,): 1.0 - 1e-9, (1,): 2.0}, 2)
    assert real._greedy_drop() == (0,)


def test_a_ranking_past_its_deadline_holds_what_was_estimated_and_says_it_stopped(caplog):
    clock = FakeClock()
    est = SetEstimate(line())
    est((0, 1))  # estimated before the ranking
    with caplog.at_level(logging.DEBUG, logger=set_estimate.__name__):
        ranked = est.best_sets(deadline=Deadline(-1.0, clock))  # expired at once
    assert ranked == [(0, 1)]
    assert any("ranking stopped after -1.0 s" in r.getMessage() for r in caplog.records)


def test_the_greedy_assignment_needs_a_depot():
    with pytest.raises(ValueError, match="need at least one depot"):
        SetEstimate(line()).greedy_assignment([])


def boundary(demand: float) -> CLRPInstance:
    """Depot 0 (capacity 1) beside the one customer, depot 1 (capacity 10) far away."""
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [100.0, 0.0]]),
        customer_locs=np.array([[1.0, 0.0]]),
        depot_capacity=np.array([1.0, 10.0]),
        opening_cost=np.ones(2),
        demand=np.array([demand]),
        vehicle_capacity=2.0,
        vehicle_fixed_cost=1.0,
        name="boundary",
    )


@pytest.mark.parametrize(
    "demand, fits",
    [(1.0, True), (1.0 + 1e-9, True), (1.5, False)],  # full; within the 1e-9 tolerance; over
)
def test_the_greedy_assignment_fits_exactly_when_the_assignment_exists(demand, fits):
    """``fits``: every depot within its capacity, i.e. what :meth:`assignment` returns None for
    (its 1e-9 tolerance included); the assignment itself is given either way."""
    est = SetEstimate(boundary(demand))
    assignment, found = est.greedy_assignment([0])
    assert found is fits and (est.assignment([0]) is not None) is fits
    assert assignment.tolist() == [0]
