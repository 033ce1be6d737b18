"""The learned starts' env input: made once per call, a unit that starts from a block of
customers decodes it with its customers permuted (:func:`customers_in_order`)."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
import torch
from clocks import FakeClock
from instances import random_instance

import clrp_rl4co.search.learned_starts as learned
from clrp_rl4co.data import CLRPSolution, Route, instances_to_tensordict
from clrp_rl4co.search import decode_plan
from clrp_rl4co.search.learned_starts import customers_in_order


def test_the_permuted_input_is_the_input_of_the_permuted_instance():
    """By definition: listing the customers in ``order`` (customer k is order[k]) gives the
    env input of the instance whose customer k is the original customer order[k], the
    network coordinates included (their scaling does not depend on the order)."""
    instance = replace(random_instance(7, seed=5, num_depots=3), rounded_costs=True)
    order = np.array([4, 0, 6, 2, 1, 5, 3])
    expected = instances_to_tensordict([
        replace(instance, customer_locs=instance.customer_locs[order],
                demand=instance.demand[order], _dist=None)
    ])  # fmt: skip
    permuted = customers_in_order(instances_to_tensordict([instance]), order)
    assert set(permuted.keys()) == set(expected.keys())
    for key in expected.keys():
        assert torch.equal(permuted[key], expected[key]), key
    assert permuted["cost_locs"].dtype == torch.float64  # the costs' coordinates kept exact


def test_the_depots_stay_first_and_the_input_is_not_changed():
    instance = random_instance(5, seed=1, num_depots=2)
    td = instances_to_tensordict([instance])
    before = td.clone()
    permuted = customers_in_order(td, np.array([4, 3, 2, 1, 0]))
    assert torch.equal(permuted["cost_locs"][0, :2], td["cost_locs"][0, :2])
    assert torch.equal(permuted["cost_locs"][0, 2:], td["cost_locs"][0, 2:].flip(0))
    assert torch.equal(permuted["demand"][0], td["demand"][0].flip(0))
    for key in td.keys():
        assert torch.equal(td[key], before[key]), key


def test_an_order_of_any_integer_dtype_or_a_list_is_a_list_of_indices():
    """``order`` holds customer indices: an int16 or uint8 array (or a list) permutes the same
    as an int64 one (not read as a mask, not refused as an index of the wrong type)."""
    instance = random_instance(5, seed=2, num_depots=2)
    td = instances_to_tensordict([instance])
    order = [3, 1, 4, 0, 2]
    expected = customers_in_order(td, np.array(order, dtype=np.int64))
    for other in (np.array(order, dtype=np.int16), np.array(order, dtype=np.uint8), order):
        permuted = customers_in_order(td, other)
        for key in expected.keys():
            assert torch.equal(permuted[key], expected[key]), (key, other)


def test_the_entries_not_permuted_are_shared_not_copied():
    instance = random_instance(4, seed=3, num_depots=2)
    td = instances_to_tensordict([instance])
    permuted = customers_in_order(td, np.array([1, 0, 3, 2]))
    for key in td.keys():
        if key not in ("locs", "cost_locs", "demand"):
            assert permuted[key].data_ptr() == td[key].data_ptr(), key


def test_at_most_pool_size_rollouts_are_kept_the_cheapest(monkeypatch):
    """Six distinct rollouts (every order of three customers on one route from depot 0) and a
    pool of three: the rollouts kept are three of them, none dearer than any left out."""
    instance = random_instance(3, seed=4, num_depots=2)  # demand <= 57 fits one vehicle of 70
    orders = list(itertools.permutations(range(3)))
    solutions = [CLRPSolution([Route(0, order)]) for order in orders]
    costs = np.array([s.cost(instance).total for s in solutions])

    def rollouts(policy, env, td, augment, starts):
        return np.array([[0, *(2 + c for c in order), 0] for order in orders]), costs

    monkeypatch.setattr(learned, "_rollouts", rollouts)
    monkeypatch.setattr(decode_plan, "PARAMS", replace(decode_plan.PARAMS, pool_size=3))
    found = learned.learned_starts(instance, None, seconds=100.0, count=1, sgbs=False,
                                   env="unused", clock=FakeClock())  # fmt: skip
    assert found.decode == "x8" and found.trajectories == 24
    assert len(found.rollouts) == 3
    kept = sorted(s.cost(instance).total for s in found.rollouts)
    assert kept == pytest.approx(sorted(costs)[:3], rel=1e-12)
