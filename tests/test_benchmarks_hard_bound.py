"""The hard benchmark's lower bound (``benchmarks/hard/bound.py``): hand-computed values on
instances of one and two customers, never above the exact optimum on small instances or above
the best-known values of the Prins instances."""

from __future__ import annotations

import numpy as np
import pytest
from instances import random_instance

from benchmarks.hard.bound import cheapest_customer_arcs, lower_bound
from benchmarks.hard.families import hetero_depots
from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.solvers import solve_exact

BOTH = pytest.mark.parametrize("integer", [True, False], ids=["mip", "lp"])


def _instance(depots, customers, capacity, opening, demand, q, fixed, rounded=False):
    return CLRPInstance(
        depot_locs=np.array(depots, float),
        customer_locs=np.array(customers, float),
        depot_capacity=np.array(capacity, float),
        opening_cost=np.array(opening, float),
        demand=np.array(demand, float),
        vehicle_capacity=q,
        vehicle_fixed_cost=fixed,
        rounded_costs=rounded,
    )


def test_cheapest_customer_arcs_on_a_line():
    # customers at x = 0, 1, 3 (the depot's arcs are not customers' neighbours)
    cost = np.abs(np.subtract.outer([50.0, 0.0, 1.0, 3.0], [50.0, 0.0, 1.0, 3.0]))
    a1, a2 = cheapest_customer_arcs(cost, num_depots=1)
    assert a1.tolist() == [1.0, 1.0, 2.0]
    assert a2.tolist() == [3.0, 2.0, 3.0]


@BOTH
def test_one_customer_pays_its_depot_a_route_and_the_round_trip(integer):
    # opening 7 + one route 2 + arcs 5 + 5 = 19, the optimum
    inst = _instance([[0, 0]], [[3, 4]], [10], [7], [1], 10.0, 2.0)
    assert lower_bound(inst, integer_depots=integer).value == pytest.approx(19.0)


@BOTH
def test_rounded_costs_are_the_instances_units(integer):
    # ceil(100 x 0.031) = 4 each way; no opening or vehicle cost
    inst = _instance([[0, 0]], [[0.031, 0]], [10], [0], [1], 10.0, 0.0, rounded=True)
    assert lower_bound(inst, integer_depots=integer).value == pytest.approx(8.0)


@BOTH
def test_two_customers_each_keep_one_depot_arc(integer):
    # depot at the origin, customers at (3, 0) and (0, 4): one route 3 + 5 + 4 = 12 is optimal;
    # the bound's depot arcs 3 + 4 and half of the 5 at each customer give 12 too (without
    # the rule that each of two customers has a depot arc it would be 2 x 3 + 5 = 11)
    inst = _instance([[0, 0]], [[3, 0], [0, 4]], [10], [0], [1, 1], 10.0, 0.0)
    assert lower_bound(inst, integer_depots=integer).value == pytest.approx(12.0)


def test_integer_depots_close_the_gap_of_two_depots_far_apart():
    # depots at x = 0 and 10, customers at 1 and 9, O = 5, F = 1: both depots with one
    # route each cost 10 + 2 + 2 + 2 = 16, the optimum; one depot costs 5 + 1 + 18 = 24
    inst = _instance([[0, 0], [10, 0]], [[1, 0], [9, 0]], [10, 10], [5, 5], [1, 1], 10.0, 1.0)
    assert lower_bound(inst, integer_depots=True).value == pytest.approx(16.0)
    assert lower_bound(inst, integer_depots=False).value <= 16.0 + 1e-6


def _tiny_hetero(seed: int, n: int = 7) -> CLRPInstance:
    """A small instance with the hard families' conventions (integer coordinates, demands
    11-20, q = 70, F = 1000, ceil(100 d)) and heterogeneous depots."""
    rng = np.random.default_rng(seed)
    demand = rng.integers(11, 21, size=n).astype(float)
    capacity, opening = hetero_depots(rng, 3, demand.sum(), 20.0, 10.0, 2.0)
    return CLRPInstance(
        depot_locs=rng.integers(0, 21, size=(3, 2)).astype(float),
        customer_locs=rng.integers(0, 21, size=(n, 2)).astype(float),
        depot_capacity=capacity,
        opening_cost=opening,
        demand=demand,
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1000.0,
        rounded_costs=True,
        name=f"tiny-{seed}",
    )


@pytest.mark.parametrize(
    "make", [lambda: _tiny_hetero(0), lambda: _tiny_hetero(1), lambda: random_instance(8, 4)]
)
def test_never_above_the_exact_optimum(make):
    inst = make()
    exact = solve_exact(inst, seconds=60, warm_start=False)
    assert exact.proven_optimal, exact.status
    mip = lower_bound(inst, integer_depots=True).value
    lp = lower_bound(inst, integer_depots=False).value
    assert lp <= mip + 1e-6 * abs(mip)
    assert mip <= exact.objective * (1 + 1e-9)
    assert mip > 0.5 * exact.objective  # a bound that says something


def test_never_above_the_best_known_values_of_the_prins_instances(benchmarks_root):
    from clrp_rl4co.data import prins_bks
    from clrp_rl4co.data.prodhon import prins_files, read_prodhon

    bks = prins_bks()
    files = prins_files(benchmarks_root / "prins")
    assert len(files) == 30
    for path in files:
        inst = read_prodhon(path)
        best = bks[path.stem].current
        lp = lower_bound(inst, integer_depots=False).value
        assert 0.6 * best < lp <= best, path.stem
        if inst.num_customers <= 50:
            mip = lower_bound(inst, integer_depots=True).value
            assert lp - 1e-6 * lp <= mip <= best, path.stem
