"""The rollout pool keeps the best *distinct* rollouts (``keep`` of them) by env cost."""

from __future__ import annotations

import numpy as np

from clrp_rl4co.search.rollout_pool import RolloutPool


def test_duplicates_in_one_batch_do_not_take_the_places_of_distinct_rollouts():
    """A batch whose two cheapest rows are the same rollout: the pool of two keeps it once and
    the next distinct rollout beside it."""
    pool = RolloutPool(num_depots=1, keep=2)
    pool.add(np.array([[0, 1, 0], [0, 1, 0], [0, 2, 0]]), np.array([1.0, 1.0, 2.0]), None)
    assert pool.items == [(1.0, (0, 1, 0)), (2.0, (0, 2, 0))]


def test_across_batches_the_best_distinct_rollouts_are_kept():
    pool = RolloutPool(num_depots=1, keep=2)
    pool.add(np.array([[0, 1, 2, 0], [0, 2, 1, 0]]), np.array([5.0, 6.0]), None)
    # the same rollout again (cheaper reading first), a new best, a duplicate of the new best
    batch = np.array([[0, 1, 2, 0], [0, 2, 0, 1], [0, 2, 0, 1]])
    pool.add(batch, np.array([5.0, 4.0, 4.0]), None)
    assert pool.items == [(4.0, (0, 2, 0, 1)), (5.0, (0, 1, 2, 0))]


def test_a_full_batch_still_ranks_and_trims_the_pool():
    """The batch fills its ``keep`` places at once: the pool is still the best ``keep`` of all
    it has seen, cheapest first."""
    pool = RolloutPool(num_depots=1, keep=1)
    pool.add(np.array([[0, 1, 0]]), np.array([5.0]), None)
    pool.add(np.array([[0, 2, 0], [0, 3, 0]]), np.array([2.0, 1.0]), None)
    assert pool.items == [(1.0, (0, 3, 0))]
