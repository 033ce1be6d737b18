"""The facility-location model of the depot-set ranking (clrp_rl4co/solvers/location_model.py).

Expectations come from the model's definition (module docstring): brute force over every set
where capacities do not bind, hand-worked instances where they do.
"""

from __future__ import annotations

import itertools
import threading
import time

import numpy as np
import pytest
from clocks import FakeClock
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_array

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.data.files import read_instance
from clrp_rl4co.execution import interrupt
from clrp_rl4co.solvers import location_model
from clrp_rl4co.solvers.location_model import candidate_depots, facility_location_set
from clrp_rl4co.solvers.set_estimate import SetEstimate
from clrp_rl4co.solvers.stopping import Deadline


def line_instance(depot_x, capacity, opening, customer_x, demand, q=15.0, fixed=0.0):
    """Depots and customers on the x axis (Euclidean, unrounded arc costs)."""
    return CLRPInstance(
        depot_locs=np.array([[x, 0.0] for x in depot_x]),
        customer_locs=np.array([[x, 0.0] for x in customer_x]),
        depot_capacity=np.asarray(capacity, float),
        opening_cost=np.asarray(opening, float),
        demand=np.asarray(demand, float),
        vehicle_capacity=q,
        vehicle_fixed_cost=fixed,
    )


def uncapacitated_value(instance: CLRPInstance, depots) -> float:
    """The model's optimum on a set whose every depot can hold the whole demand: each customer
    at its nearest depot of the set, ``F T / q`` for the routes."""
    arc = instance.cost_matrix()[: instance.num_depots, instance.num_depots :][list(depots)]
    q = instance.vehicle_capacity
    radial = (2.0 * arc.min(axis=0) * instance.demand / q).sum()
    routes = instance.vehicle_fixed_cost * instance.demand.sum() / q
    return instance.opening_cost[list(depots)].sum() + routes + radial


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_without_binding_capacities_the_model_opens_the_cheapest_set(seed):
    rng = np.random.default_rng(seed)
    num_depots, num_customers = 8, 30
    demand = rng.integers(10, 20, num_customers).astype(float)
    instance = CLRPInstance(
        depot_locs=rng.random((num_depots, 2)),
        customer_locs=rng.random((num_customers, 2)),
        depot_capacity=np.full(num_depots, demand.sum()),
        opening_cost=rng.uniform(0.5, 3.0, num_depots),
        demand=demand,
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
    )
    every_set = [
        s for size in range(1, num_depots + 1) for s in itertools.combinations(range(8), size)
    ]
    best = min(every_set, key=lambda s: uncapacitated_value(instance, s))
    assert facility_location_set(instance, seconds=30.0, nearest=num_depots) == best
    assert facility_location_set(instance, seconds=None, nearest=num_depots) == best


@pytest.mark.parametrize(("far_opening", "expected"), [(0.0, (0, 2)), (80.0, (1,))])
def test_a_binding_capacity_sends_demand_to_another_depot(far_opening, expected):
    # Customers at x = 1, 2, 3 (demand 5 each, q = 15, so 2 c / 3 per customer at arc cost c).
    # Depot 0 at x = 0 costs 1 and holds 10; depot 1 at x = 2 holds 15 and costs 100; depot 2
    # at x = 50 holds 15. {0, 2}: 1 + 10 units at depot 0 (customers 1, 2: 2 (1 + 2) / 3 = 2),
    # 5 at depot 2 (customer 3: 2 x 47 / 3 = 31.3), so 34.3 + far_opening. {1}: 100 + 2 (1 +
    # 0 + 1) / 3 = 101.3; {0, 1}: 1 more; {2}: 96 + far_opening; {0} cannot hold the demand.
    instance = line_instance(
        depot_x=[0.0, 2.0, 50.0],
        capacity=[10.0, 15.0, 15.0],
        opening=[1.0, 100.0, far_opening],
        customer_x=[1.0, 2.0, 3.0],
        demand=[5.0, 5.0, 5.0],
    )
    assert facility_location_set(instance, seconds=30.0) == expected


def test_customers_are_served_only_from_their_nearest_depots():
    # Customer 1 sits on depot 1, which costs 50; depot 0 (free, x = 0) is nearest to the
    # others and can hold everything. Allowed all depots, the model serves customer 1 from
    # depot 0 (2 x 10 x 5 / 15 = 6.7 < 50); allowed only its nearest depot, it must open 1.
    instance = line_instance(
        depot_x=[0.0, 10.0],
        capacity=[30.0, 30.0],
        opening=[0.0, 50.0],
        customer_x=[1.0, 10.0, 2.0],
        demand=[5.0, 5.0, 5.0],
    )
    np.testing.assert_array_equal(candidate_depots(instance, 1), [[0], [1], [0]])
    np.testing.assert_array_equal(candidate_depots(instance, 5), [[0, 1], [1, 0], [0, 1]])
    assert facility_location_set(instance, seconds=30.0, nearest=2) == (0,)
    assert facility_location_set(instance, seconds=30.0, nearest=1) == (0, 1)


def test_no_set_when_the_nearest_depots_cannot_hold_the_demand():
    instance = line_instance(
        depot_x=[0.0, 10.0],
        capacity=[8.0, 30.0],
        opening=[0.0, 0.0],
        customer_x=[1.0, 2.0],
        demand=[5.0, 5.0],
    )
    assert facility_location_set(instance, seconds=30.0, nearest=1) is None
    assert facility_location_set(instance, seconds=30.0, nearest=2) == (0, 1)


def test_a_stop_request_ends_the_model_early():
    # hetero-600-0 (30 depots, 600 customers) takes HiGHS well over 5 s to close its gap.
    instance = read_instance("datasets/hard/hetero/hetero-600-0.dat")
    timer = threading.Timer(1.0, interrupt.request)
    start = time.perf_counter()
    timer.start()
    try:
        facility_location_set(instance, seconds=120.0)
    finally:
        timer.cancel()
        interrupt.clear()
    assert time.perf_counter() - start < 6.0


def model_optimum(instance: CLRPInstance) -> float:
    """The optimum of the module docstring's model (every depot allowed for every customer),
    built here with SciPy's ``milp``: a lower bound on the estimate of any set whose greedy
    assignment holds (that estimate rounds the routes up and assigns customers whole)."""
    nd, nc = instance.num_depots, instance.num_customers
    d, q = instance.demand, instance.vehicle_capacity
    arc = instance.cost_matrix()[:nd, nd:]
    # columns: y (nd), r (nd), z (nd x nc, row-major by depot)
    c = np.concatenate([instance.opening_cost, np.full(nd, instance.vehicle_fixed_cost),
                        (2.0 * arc * d / q).ravel()])  # fmt: skip
    ncol = len(c)
    entries: list[tuple[int, int, float]] = []  # (row, column, coefficient)
    lo: list[float] = []
    hi: list[float] = []

    def row(coef: dict[int, float], low: float, high: float) -> None:
        entries.extend((len(lo), col, val) for col, val in coef.items())
        lo.append(low)
        hi.append(high)

    for j in range(nc):
        row({2 * nd + i * nc + j: 1.0 for i in range(nd)}, 1.0, 1.0)
    for i in range(nd):
        z_i = 2 * nd + i * nc + np.arange(nc)
        for j in range(nc):
            row({int(z_i[j]): 1.0, i: -1.0}, -np.inf, 0.0)
        row({**dict(zip(z_i.tolist(), d)), i: -instance.depot_capacity[i]}, -np.inf, 0.0)
        row({**dict(zip(z_i.tolist(), d)), nd + i: -q}, -np.inf, 0.0)
    r, col, val = map(np.array, zip(*entries))
    matrix = coo_array((val, (r, col)), shape=(len(lo), ncol)).tocsr()
    upper = np.full(ncol, np.inf)
    upper[:nd] = 1.0
    upper[2 * nd :] = 1.0
    integrality = np.zeros(ncol)
    integrality[:nd] = 1
    res = milp(c, constraints=LinearConstraint(matrix, lo, hi),
               integrality=integrality, bounds=Bounds(np.zeros(ncol), upper))  # fmt: skip
    assert res.status == 0, res.message
    return float(res.fun)


@pytest.mark.parametrize("name", ["hetero-200-1", "hetero-300-0"])
def test_the_ranking_comes_near_the_model_optimum_on_heterogeneous_depots(name):
    # 15 or 20 depots whose capacities spread over a factor of 10 and whose opening costs grow
    # with capacity: 32,767 or 1,048,575 sets, of which max_sets = 1,100 enumerates those of
    # one and two depots only. Dropping the dearest depot first from all of them stops at a
    # set of many small depots far above the best sets; the ranking must come within 5% of
    # the model's optimum, a lower bound on the estimate of every set it can price whole.
    instance = read_instance(f"datasets/hard/hetero/{name}.dat")
    est = SetEstimate(instance)
    ranked = est.best_sets()
    bound = model_optimum(instance)
    assert bound <= est(ranked[0]) <= 1.05 * bound


def test_the_model_prints_nothing(capfd):
    instance = line_instance([0.0, 2.0, 50.0], [10.0, 15.0, 15.0], [1.0, 100.0, 0.0],
                             [1.0, 2.0, 3.0], [5.0, 5.0, 5.0])  # fmt: skip
    capfd.readouterr()
    assert facility_location_set(instance, seconds=30.0) == (0, 2)
    assert capfd.readouterr().out == ""


def test_without_a_time_limit_the_branch_and_bound_is_node_limited(monkeypatch):
    seen = {}
    real = location_model.run_highs

    def spy(h, seconds):
        seen["nodes"], seen["seconds"] = h.getOptionValue("mip_max_nodes")[1], seconds
        return real(h, seconds)

    monkeypatch.setattr(location_model, "run_highs", spy)
    instance = line_instance([0.0, 2.0, 50.0], [10.0, 15.0, 15.0], [1.0, 100.0, 0.0],
                             [1.0, 2.0, 3.0], [5.0, 5.0, 5.0])  # fmt: skip
    facility_location_set(instance, seconds=None)
    assert seen == {"nodes": location_model.MAX_NODES, "seconds": 120.0}
    facility_location_set(instance, seconds=3.0)
    assert seen["seconds"] == 3.0 and seen["nodes"] > location_model.MAX_NODES  # HiGHS's default


def test_the_models_set_is_ranked_even_when_the_model_used_up_the_rankings_time(monkeypatch):
    # The model runs last in the ranking (fewer than model_first_depots depots) and here
    # spends all the time the ranking had left: the set it returns must still be priced and
    # ranked (at 5,000 customers it is the best set by far, and the first one routed). The
    # set below (the six dearest depots) is not one the ranking reaches by itself.
    import clrp_rl4co.solvers.set_estimate as set_estimate

    rng = np.random.default_rng(4)
    instance = CLRPInstance(
        depot_locs=rng.random((12, 2)),
        customer_locs=rng.random((40, 2)),
        depot_capacity=np.full(12, 400.0),
        opening_cost=np.arange(1.0, 13.0),
        demand=rng.integers(10, 20, 40).astype(float),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
    )
    dearest = (6, 7, 8, 9, 10, 11)
    clock = FakeClock()
    ranked_alone = SetEstimate(instance)
    monkeypatch.setattr(set_estimate, "facility_location_set", lambda *args: None)
    assert dearest not in ranked_alone.best_sets(deadline=Deadline(5.0, clock))

    def slow_model(inst, seconds):
        clock.now += 10.0  # past the ranking's deadline
        return dearest

    monkeypatch.setattr(set_estimate, "facility_location_set", slow_model)
    est = SetEstimate(instance)
    ranked = est.best_sets(deadline=Deadline(5.0, clock))
    assert dearest in ranked
    assert est(dearest) == SetEstimate(instance)(dearest)


# ------------------------------------------------------------------------- customer groups
def test_up_to_max_groups_every_customer_is_its_own_group():
    locs = np.random.default_rng(0).random((9, 2))
    np.testing.assert_array_equal(location_model.customer_groups(locs, 9), np.arange(9))


@pytest.mark.parametrize(
    ("num_customers", "max_groups", "side"), [(100, 16, 4), (100, 20, 4), (10_000, 2000, 44)]
)
def test_groups_are_cells_of_equal_counts_in_strips_of_equal_counts(
    num_customers, max_groups, side
):
    locs = np.random.default_rng(1).random((num_customers, 2))
    labels = location_model.customer_groups(locs, max_groups)
    assert labels.shape == (num_customers,)
    np.testing.assert_array_equal(np.unique(labels), np.arange(side * side))
    strip, cell = labels // side, labels % side
    per_strip = np.bincount(strip)
    assert per_strip.max() - per_strip.min() <= 1
    for k in range(side - 1):  # strips in order of x, every customer of one left of the next
        assert locs[strip == k, 0].max() <= locs[strip == k + 1, 0].min()
    for k in range(side):  # cells of a strip in order of y
        in_strip = strip == k
        sizes = np.bincount(cell[in_strip])
        assert sizes.max() - sizes.min() <= 1
        for m in range(side - 1):
            assert (locs[in_strip & (cell == m), 1].max()
                    <= locs[in_strip & (cell == m + 1), 1].min())  # fmt: skip


def paired_instance(seed: int, capacity_factor: float) -> CLRPInstance:
    """Nine places with two customers each (18 customers; grouped by nine cells: the pairs)
    and six depots whose capacities bind for a small ``capacity_factor``."""
    rng = np.random.default_rng(seed)
    places = rng.random((9, 2))
    demand = rng.integers(5, 15, 18).astype(float)
    return CLRPInstance(
        depot_locs=rng.random((6, 2)),
        customer_locs=np.repeat(places, 2, axis=0),
        depot_capacity=capacity_factor * demand.sum() * rng.uniform(0.8, 1.2, 6) / 6,
        opening_cost=rng.uniform(0.5, 3.0, 6),
        demand=demand,
        vehicle_capacity=40.0,
        vehicle_fixed_cost=1.0,
    )


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("capacity_factor", [8.0, 1.6])
def test_grouping_customers_at_one_place_leaves_the_models_set_unchanged(seed, capacity_factor):
    """Customers at the same place cost the same from every depot, so tying their shares
    together loses nothing: with the pairs as groups the model's set is the ungrouped one."""
    instance = paired_instance(seed, capacity_factor)
    labels = location_model.customer_groups(instance.customer_locs, 9)
    np.testing.assert_array_equal(labels[0::2], labels[1::2])  # the groups are the pairs
    assert len(set(labels)) == 9
    alone = facility_location_set(instance, seconds=30.0, nearest=6, max_groups=100)
    grouped = facility_location_set(instance, seconds=30.0, nearest=6, max_groups=9)
    assert grouped == alone
    if capacity_factor == 8.0:  # every depot holds the demand: the brute-force optimum
        every_set = [s for size in range(1, 7) for s in itertools.combinations(range(6), size)]
        assert grouped == min(every_set, key=lambda s: uncapacitated_value(instance, s))


def test_a_group_is_served_from_the_depots_cheapest_for_all_its_customers():
    # Four customers and max_groups 2: side 1, one group of all four. Depot 0 at x = 0 is
    # nearest to three of them, depot 1 at x = 10 to one; by demand-weighted arc costs the
    # group's cheapest depot is 0 (1 x 1 + 2 x 1 + 3 x 1 + 9 x 1 = 15 against 9 + 8 + 7 + 1 =
    # 25), so with one candidate depot only depot 0 may serve the group.
    instance = line_instance(
        depot_x=[0.0, 10.0],
        capacity=[30.0, 30.0],
        opening=[0.0, 0.0],
        customer_x=[1.0, 2.0, 3.0, 9.0],
        demand=[1.0, 1.0, 1.0, 1.0],
    )
    assert len(set(location_model.customer_groups(instance.customer_locs, 2))) == 1
    assert facility_location_set(instance, seconds=30.0, nearest=1, max_groups=2) == (0,)
    assert facility_location_set(instance, seconds=30.0, nearest=1, max_groups=4) == (0, 1)


def two_large_far_depots_instance() -> CLRPInstance:
    """Ten customers (demand 5 each, at x = 1..10) with ten small depots among them (capacity
    10, opening 50) and two large ones far out (x = -20 and 31, capacity 25 each: together
    exactly the demand, opening 10). Every customer's ten nearest depots are the small ones.
    With F = 0 and q = 15 the two large depots cost 20 + 2/3 (21+..+25 + 25+..+21) = 173.3;
    any set with a small depot opens at least three of them (150) beside a large one, whose
    five customers alone add 2/3 (21+..+25) = 76.7."""
    return line_instance(
        depot_x=[*range(1, 11), -20, 31],
        capacity=[10.0] * 10 + [25.0, 25.0],
        opening=[50.0] * 10 + [10.0, 10.0],
        customer_x=list(range(1, 11)),
        demand=[5.0] * 10,
    )


def test_the_pairs_budget_sets_how_many_depots_each_customer_may_be_served_from(monkeypatch):
    instance = two_large_far_depots_instance()  # 10 customers, 12 depots
    assert facility_location_set(instance, seconds=30.0) == (10, 11)  # 6000 pairs: every depot
    only_nearest = facility_location_set(instance, seconds=30.0, nearest=10)
    assert only_nearest is not None and not {10, 11} & set(only_nearest)
    # 11 depots each: every customer reaches its nearer large depot, which holds its half
    monkeypatch.setattr(location_model, "SERVED_PAIRS", 110)
    assert candidate_depots(instance).shape == (10, 11)
    assert facility_location_set(instance, seconds=30.0) == (10, 11)
    monkeypatch.setattr(location_model, "SERVED_PAIRS", 109)
    assert candidate_depots(instance).shape == (10, 10)
    assert facility_location_set(instance, seconds=30.0) == only_nearest


def test_the_default_reach_shares_the_pairs_budget_never_below_nearest_nor_above_every_depot():
    pairs, nearest = location_model.SERVED_PAIRS, location_model.NEAREST
    assert location_model.default_nearest(pairs // 20, 30) == 20
    assert location_model.default_nearest(pairs // 20 + 1, 30) == 19
    assert location_model.default_nearest(pairs // 20, 19) == 19
    assert location_model.default_nearest(pairs, 30) == nearest
    assert location_model.default_nearest(10 * pairs, 30) == nearest
    assert location_model.default_nearest(pairs, 5) == 5


def test_one_customer_gets_the_whole_pairs_budget(monkeypatch):
    monkeypatch.setattr(location_model, "SERVED_PAIRS", 20)
    assert location_model.default_nearest(1, 30) == 20
    assert location_model.default_nearest(0, 30) == 20  # no division by zero
    assert location_model.default_nearest(2, 30) == location_model.NEAREST


def test_grouped_customers_share_the_pairs_budget_by_groups(monkeypatch):
    # max_groups 4 on the line: groups {1,2,3} {4,5} {6,7,8} {9,10} (demand 15, 10, 15, 10),
    # the first two nearer the large depot at x = -20, the last two the one at x = 31
    instance = two_large_far_depots_instance()
    monkeypatch.setattr(location_model, "SERVED_PAIRS", 44)  # 11 a group, 4 a customer
    assert facility_location_set(instance, seconds=30.0, max_groups=4) == (10, 11)
    ten = facility_location_set(instance, seconds=30.0, nearest=10, max_groups=4)
    assert ten is not None and not {10, 11} & set(ten)
