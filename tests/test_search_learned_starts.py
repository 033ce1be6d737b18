"""The learned starts' env input: made once per call, a unit that starts from a block of
customers decodes it with its customers permuted (:func:`customers_in_order`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch
from instances import random_instance

from clrp_rl4co.data import instances_to_tensordict
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
