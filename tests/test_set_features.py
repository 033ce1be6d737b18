"""Depot-set features and Daganzo's continuous approximation (``solvers/set_features.py``) on
cases computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from instances import random_instance

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.solvers.set_estimate import SetEstimate
from clrp_rl4co.solvers.set_features import (
    DAGANZO_K,
    DEPOT_NAMES,
    SET_FEATURES,
    SetFeaturizer,
    column,
    continuous_approximation,
    convex_hull_area,
    coordinate_scale,
    depot_features,
    local_areas,
    set_vector,
)


def tiny(rounded: bool = False, scale: float = 1.0) -> CLRPInstance:
    """Depot 0 at (0, 0) with customers (1, 0), (0, 1), (-1, 0); depot 1 at (10, 0) with
    customer (10, 2); depot 2 at (5, 5) (closed in the tests); q = 40, F = 3."""
    return CLRPInstance(
        depot_locs=scale * np.array([[0.0, 0.0], [10.0, 0.0], [5.0, 5.0]]),
        customer_locs=scale * np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [10.0, 2.0]]),
        depot_capacity=np.array([50.0, 100.0, 80.0]),
        opening_cost=np.array([7.0, 9.0, 4.0]),
        demand=np.array([10.0, 20.0, 30.0, 5.0]),
        vehicle_capacity=40.0,
        vehicle_fixed_cost=3.0,
        rounded_costs=rounded,
        name="tiny",
    )


ASSIGNMENT = np.array([0, 0, 0, 1])


def by_name(row: np.ndarray) -> dict[str, float]:
    return dict(zip(DEPOT_NAMES, row.tolist()))


def test_convex_hull_area():
    square = np.array([[0, 0], [2, 0], [2, 2], [0, 2], [1, 1], [1, 0]], float)  # + interior
    assert convex_hull_area(square) == pytest.approx(4.0)
    assert convex_hull_area(np.array([[0, 0], [1, 0], [0, 1]], float)) == pytest.approx(0.5)
    assert convex_hull_area(np.array([[0, 0], [1, 1], [2, 2], [3, 3]], float)) == 0.0
    assert convex_hull_area(np.array([[0, 0], [1, 1]], float)) == 0.0
    assert convex_hull_area(np.array([[0, 0], [0, 0], [0, 0]], float)) == 0.0


def test_depot_features_by_hand():
    inst = tiny()
    rows = depot_features(inst, [1, 0], ASSIGNMENT, local_areas(inst, neighbours=1))
    assert rows.shape == (2, len(DEPOT_NAMES))
    d0, d1 = by_name(rows[0]), by_name(rows[1])  # rows in depot order: 0, then 1
    spread = (2 * math.sqrt(10) / 3 + 2 / 3) / 3  # centroid (0, 1/3)
    expected0 = dict(customers=3, load=60, capacity=50, load_ratio=1.2, routes=2,
                     route_fill=0.75, dist_mean=1, dist_max=1, dist_std=0, radial=3.0,
                     spread=spread, hull_area=1.0, line_haul=4.0, hull_tour=math.sqrt(3),
                     local_tour=3 * math.sqrt(2 * math.pi), overload=10, opening=7)  # fmt: skip
    expected1 = dict(customers=1, load=5, capacity=100, load_ratio=0.05, routes=1,
                     route_fill=5 / 40, dist_mean=2, dist_max=2, dist_std=0, radial=0.5,
                     spread=0, hull_area=0, line_haul=4.0, hull_tour=0,
                     local_tour=math.sqrt(85 * math.pi), overload=0, opening=9)  # fmt: skip
    for name in DEPOT_NAMES:
        assert d0[name] == pytest.approx(expected0[name]), name
        assert d1[name] == pytest.approx(expected1[name]), name


def test_local_areas_by_hand():
    inst = tiny()
    # nearest other customer: sqrt(2) for the three near depot 0, sqrt(85) for (10, 2)
    assert local_areas(inst, 1) == pytest.approx(np.pi * np.array([2.0, 2.0, 2.0, 85.0]))
    # k is at most N - 1 = 3: the farthest other customer
    far = np.array([85.0, 100.0 + 1.0, 121.0 + 4.0, 121.0 + 4.0]) / 3
    assert local_areas(inst, 5) == pytest.approx(np.pi * far)
    assert local_areas(inst, 2, chunk=1) == pytest.approx(local_areas(inst, 2))


def test_rounded_costs_scale_the_coordinates():
    plain, rounded = tiny(), tiny(rounded=True)
    assert coordinate_scale(plain) == 1.0 and coordinate_scale(rounded) == 100.0
    row = by_name(depot_features(rounded, [0, 1], ASSIGNMENT)[0])
    assert row["hull_area"] == pytest.approx(1e4)
    assert row["dist_mean"] == 100.0  # ceil(100 x 1)
    assert row["spread"] == pytest.approx(100 * (2 * math.sqrt(10) / 3 + 2 / 3) / 3)


def test_continuous_approximation_by_hand():
    inst = tiny()
    rows = depot_features(inst, [0, 1], ASSIGNMENT, local_areas(inst, neighbours=1))
    # depot 0: F 2 routes + 2 x 1 x 2 + k sqrt(3 x 1); depot 1: F 1 route + 2 x 2 x 1 + 0
    hull = 3 * 2 + 4 + DAGANZO_K * math.sqrt(3) + 3 * 1 + 4
    assert continuous_approximation(rows, 3.0) == pytest.approx(hull)
    local = 17 + 0.9 * (3 * math.sqrt(2 * math.pi) + math.sqrt(85 * math.pi))
    assert continuous_approximation(rows, 3.0, k=0.9, area="local") == pytest.approx(local)
    with pytest.raises(ValueError, match="area"):
        continuous_approximation(rows, 3.0, area="disk")


def test_set_vector_pools_the_depots_that_serve():
    inst = tiny()
    rows = depot_features(inst, [0, 1, 2], ASSIGNMENT)  # depot 2 in the set, serving none
    assert by_name(rows[2])["customers"] == 0 and by_name(rows[2])["opening"] == 4
    vec = set_vector(rows, inst)
    assert vec.shape == (len(SET_FEATURES),)
    v = dict(zip(SET_FEATURES, vec.tolist()))
    assert v["sum_customers"] == 4 and v["mean_customers"] == 2 and v["max_customers"] == 3
    assert v["sum_opening"] == 16  # depot 2's opening cost is not pooled
    assert v["max_load_ratio"] == pytest.approx(1.2)
    assert v["mean_dist_mean"] == pytest.approx(1.5)
    assert (v["num_customers"], v["vehicle_capacity"], v["vehicle_fixed_cost"]) == (4, 40, 3)
    assert (v["set_size"], v["used"]) == (3, 2)


def test_bad_assignments_are_refused():
    inst = tiny()
    with pytest.raises(ValueError, match="every customer"):
        depot_features(inst, [0], ASSIGNMENT)
    with pytest.raises(ValueError, match="shape"):
        depot_features(inst, [0, 1], ASSIGNMENT[:3])


def test_featurizer_uses_the_estimate_assignment():
    inst = random_instance(30, seed=3, num_depots=5)
    est = SetEstimate(inst)
    featurizer = SetFeaturizer(inst, est)
    depots = (0, 2, 4)
    assignment, fits = est.greedy_assignment(depots)
    assert set(assignment.tolist()) <= set(depots)
    assert fits == (est.assignment(depots) is not None)
    if fits:
        assert (assignment == est.assignment(depots)).all()
    rows = featurizer.per_depot(depots)
    assert rows == pytest.approx(depot_features(inst, depots, assignment))
    # SetEstimate's value = opening of the whole set + F routes + the radial part
    routes, radial = rows[:, column("routes")].sum(), rows[:, column("radial")].sum()
    opening = inst.opening_cost[list(depots)].sum()
    assert est(depots) == pytest.approx(opening + inst.vehicle_fixed_cost * routes + radial)
    assert featurizer.opening(rows) == pytest.approx(rows[rows[:, 0] > 0, column("opening")].sum())
    assert featurizer.approximation(rows) == pytest.approx(
        continuous_approximation(rows, inst.vehicle_fixed_cost)
    )


def test_greedy_assignment_of_an_overloaded_set():
    inst = tiny()
    est = SetEstimate(inst)
    assignment, fits = est.greedy_assignment([0])  # 65 of demand on a depot of 50
    assert not fits and (assignment == 0).all()
    assert est.assignment([0]) is None
    with pytest.raises(ValueError):
        est.greedy_assignment([])
