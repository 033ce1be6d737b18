"""Pricing a depot-set move by its region (:mod:`clrp_rl4co.solvers.region`), from hand-worked
instances: which depots the region holds, that it grows until it holds the demand it takes
over, that the routes outside it are kept as they were, and that the depot-set search prices
its candidates this way from ``local_customers`` customers only."""

from __future__ import annotations

import numpy as np
import pytest
from clocks import FakeClock

from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route
from clrp_rl4co.solvers.region import region_depots, reroute_region
from clrp_rl4co.solvers.set_search import SetSearch, SetSearchParams
from clrp_rl4co.solvers.stopping import Deadline


def line(capacity=100.0) -> CLRPInstance:
    """Five depots (``capacity``: one for all, or one each) on the x axis at 0, 1, 2, 3 and
    10; one customer of demand 1 just above each of the first four depots (customer k at
    (k, 1)) and one above x = 10 (customer 4)."""
    xs = np.array([0.0, 1.0, 2.0, 3.0, 10.0])
    return CLRPInstance(
        depot_locs=np.stack([xs, np.zeros(5)], axis=1),
        customer_locs=np.stack([xs, np.ones(5)], axis=1),
        depot_capacity=np.broadcast_to(np.asarray(capacity, float), (5,)).copy(),
        opening_cost=np.full(5, 10.0),
        demand=np.ones(5),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
        name="line",
    )


def one_route_each(depots) -> CLRPSolution:
    """Customer k served alone from depot ``depots[k]``."""
    return CLRPSolution([Route(int(d), (k,)) for k, d in enumerate(depots)])


def test_the_region_is_the_opened_depots_and_the_nearest_kept_ones_of_each_change():
    """Depots 0-3 in use, the move closes 2 and opens 4. Kept: 0, 1, 3. Nearest kept to 2
    (x = 2): 1 and 3 (both at distance 1); nearest kept to 4 (x = 10): 3 (7) and 1 (9). The
    region is {1, 3, 4}; depot 0, far from both changes, is not routed again."""
    instance = line()
    solution = one_route_each([0, 1, 2, 3, 3])
    region, closed = region_depots(instance, solution, (0, 1, 3, 4))
    assert region == (1, 3, 4)
    assert closed == (2,)


def test_one_neighbour_takes_only_the_nearest_kept_depot():
    """With one neighbour the drop of depot 0 (x = 0) routes again only kept depot 1 (x = 1),
    the nearest of 1, 2 and 3."""
    instance = line()
    solution = one_route_each([0, 1, 2, 3, 3])
    assert region_depots(instance, solution, (1, 2, 3), neighbours=1) == ((1,), (0,))


def recording_route(calls: list):
    """A ``route`` that records its sub-instance and answers with its warm start."""

    def route(instance, depots, seconds, iterations, seed, warm=None, polish_share=None,
              clock=None):  # fmt: skip
        calls.append((instance, tuple(depots), warm, polish_share))
        route.budget.append((seconds, iterations, seed, clock))
        return warm

    route.budget = []
    return route

    return route


def test_routes_outside_the_region_are_kept_and_the_closed_depots_customers_move_in():
    """Close depot 2 (serving customer 2) with one neighbour: the region is depot 1 or 3
    (both at distance 1 from 2: the first kept, 1). The region's run sees customers 1 and 2
    only (those of depot 1 and of the closed 2); routes of depots 0 and 3 come back unchanged,
    and customer 2 is now served from depot 1."""
    instance = line()
    solution = one_route_each([0, 1, 2, 3, 3])
    calls: list = []
    found = reroute_region(instance, solution, (0, 1, 3), None, 10, 0, recording_route(calls),
                           neighbours=1)  # fmt: skip
    ((sub, depots, warm, polish_share),) = calls
    assert sub.num_customers == 2 and sub.num_depots == 1
    np.testing.assert_allclose(sub.customer_locs, [[1.0, 1.0], [2.0, 1.0]])
    assert polish_share == 0.0  # a candidate's run is compared without the trips polish
    kept = [r for r in found.routes if r.depot in (0, 3)]
    assert kept == [Route(0, (0,)), Route(3, (3,)), Route(3, (4,))]
    served = sorted(c for r in found.routes if r.depot == 1 for c in r.customers)
    assert served == [1, 2]
    assert {r.depot for r in found.routes} <= {0, 1, 3}
    assert sorted(c for r in found.routes for c in r.customers) == [0, 1, 2, 3, 4]


def test_the_region_grows_until_its_depots_hold_the_demand_they_take_over():
    """Capacity 2 at every depot but depot 3 (capacity 3); depot 1 serves customers 0 and 1,
    depot 2 customer 2, depot 3 customers 3 and 4. Dropping depot 2 with one neighbour would
    give the region depot 1 alone (capacity 2) for customers 0, 1 and 2 (demand 3): it grows to
    the two nearest kept depots, 1 and 3 (capacity 5 for customers 0-4, demand 5)."""
    instance = line(capacity=[2.0, 2.0, 2.0, 3.0, 2.0])
    solution = CLRPSolution([Route(1, (0, 1)), Route(2, (2,)), Route(3, (3, 4))])
    assert region_depots(instance, solution, (1, 3), neighbours=1) == ((1,), (2,))
    calls: list = []
    found = reroute_region(instance, solution, (1, 3), None, 10, 0, recording_route(calls),
                           neighbours=1)  # fmt: skip
    ((sub, _, _, _),) = calls
    np.testing.assert_allclose(sub.depot_locs, [[1.0, 0.0], [3.0, 0.0]])
    assert sub.num_customers == 5
    assert {r.depot for r in found.routes} == {1, 3}


def test_no_routes_from_the_region_run_means_no_candidate():
    instance = line()
    solution = one_route_each([0, 1, 2, 3, 3])

    def nothing(*args, **kwargs):
        return None

    assert reroute_region(instance, solution, (0, 1, 3), None, 10, 0, nothing) is None


@pytest.mark.parametrize("local_customers, by_region", [(5, True), (6, False)])
def test_the_search_prices_candidates_by_region_from_the_customer_count(local_customers, by_region):
    """``local_customers``: from this many customers (5 here) a candidate's run sees only its
    region's customers, on ``local_share`` of the budget, and the last run keeps
    ``local_final_share``; below, the whole instance on ``eval_share``, ``final_share`` kept."""
    instance = line()
    calls: list = []
    params = SetSearchParams(local_customers=local_customers, local_share=0.05, eval_share=0.1,
                             local_final_share=0.3)  # fmt: skip
    search = SetSearch(instance, Deadline(100.0), 1000, 0, recording_route(calls), params)
    search.best = one_route_each([0, 1, 2, 3, 3])
    search.try_set((0, 1, 3))
    ((sub, _, _, _),) = calls
    assert (sub.num_customers < instance.num_customers) is by_region
    # by region (1 - 0.15 - 0.3) / 0.05 candidates, else (1 - 0.15 - 0.2) / 0.1
    assert search.max_candidates == (11 if by_region else 6)
    assert search.final_share == (0.3 if by_region else 0.2)


@pytest.mark.parametrize("seconds, by_region", [(4.99, False), (5.0, True), (None, False)])
def test_only_searches_of_local_min_seconds_or_more_price_by_region(seconds, by_region):
    """``local_min_seconds`` (5 here): a time-limited search of fewer seconds, or one limited
    by iterations only, routes each candidate's whole set and keeps ``final_share``; one of
    5 s or more prices by region."""
    params = SetSearchParams(local_customers=5, local_min_seconds=5.0)
    deadline = Deadline(seconds, FakeClock())
    search = SetSearch(line(), deadline, 100, 0, recording_route([]), params)
    assert search.by_region is by_region
    assert search.final_share == (params.local_final_share if by_region else params.final_share)


def test_ties_between_kept_depots_go_to_the_lower_index():
    """Forty kept depots, 39 of them at (1, 0) and depot 20 at (0.5, 0); closing depot 40 at the
    origin with three neighbours takes depot 20, then the two lowest indices of the tie: 0
    and 1 (an unstable sort of 40 distances may not)."""
    xs = np.array([1.0] * 20 + [0.5] + [1.0] * 19 + [0.0])
    instance = CLRPInstance(
        depot_locs=np.stack([xs, np.zeros(41)], axis=1),
        customer_locs=np.stack([xs, np.ones(41)], axis=1),
        depot_capacity=np.full(41, 100.0),
        opening_cost=np.ones(41),
        demand=np.ones(41),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    solution = one_route_each(range(41))
    assert region_depots(instance, solution, tuple(range(40)), neighbours=3) == ((0, 1, 20), (40,))


def test_the_region_grows_by_one_neighbour_and_stops_once_its_capacity_equals_the_load():
    """Depots 0, 1, 2, 3 each serve their customer, depot 3 also customer 4. Drop depot 2: one
    neighbour gives depot 1 (capacity 1) for customers 1 and 2; two give depots 1 and 3
    (capacity 1 + 3 = 4) for customers 1-4 (demand 4, exactly held): the region stops there
    and depot 0 is not routed again."""
    instance = line(capacity=[1.0, 1.0, 1.0, 3.0, 1.0])
    solution = one_route_each([0, 1, 2, 3, 3])
    calls: list = []
    reroute_region(instance, solution, (0, 1, 3), None, 10, 0, recording_route(calls),
                   neighbours=1)  # fmt: skip
    ((sub, _, _, _),) = calls
    np.testing.assert_allclose(sub.depot_locs, [[1.0, 0.0], [3.0, 0.0]])
    assert sub.num_customers == 4


def test_the_region_run_gets_the_budget_the_warm_start_and_no_polish(caplog):
    """Close depot 3 (x = 3) with two neighbours: the region is depots 1 and 2; depot 3's
    routes (customers 3 and 4) start at the region depot nearest depot 3, depot 2. The run gets
    the call's seconds, iterations, seed and clock, no trips polish, and a sub-instance named
    after the instance; the joined solution's cost is logged."""
    instance = line()
    solution = one_route_each([0, 1, 2, 3, 3])
    calls: list = []
    route = recording_route(calls)
    clock = FakeClock()
    with caplog.at_level("DEBUG", logger="clrp_rl4co.solvers.region"):
        found = reroute_region(instance, solution, (0, 1, 2), 1.5, 10, 7, route, clock=clock)
    ((sub, depots, warm, polish_share),) = calls
    assert depots == (0, 1) and sub.name == "line[region]" and polish_share == 0.0
    assert route.budget == [(1.5, 10, 7, clock)]
    # local depots: 0 = depot 1, 1 = depot 2; local customers: 0..3 = customers 1..4
    assert sorted(warm.routes, key=lambda r: r.customers) == [
        Route(0, (0,)),
        Route(1, (1,)),
        Route(1, (2,)),
        Route(1, (3,)),
    ]
    from clrp_rl4co.solvers.common import solution_cost

    cost = solution_cost(instance, found)
    assert caplog.messages == [
        f"line: set (0, 1, 2) by its region (1, 2) (4 customers): {cost:.6g}"
    ]
