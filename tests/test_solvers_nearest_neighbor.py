"""The constructive nearest-neighbour baseline (clrp_rl4co.solvers.nearest_neighbor): its
location and routing rules on hand-checked instances, and valid solutions on a batch."""

from __future__ import annotations

import numpy as np
import torch
from instances import random_instance

from clrp_rl4co.data import CLRPInstance, instances_to_tensordict
from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.solvers.nearest_neighbor import nearest_neighbor_rollout


def _line(depots, opening, customers, demand=None, vehicle=100.0, capacity=None):
    """An instance with every node on the x axis (distances are differences of x)."""
    n = len(customers)
    return CLRPInstance(
        depot_locs=np.array([[x, 0.0] for x in depots]),
        customer_locs=np.array([[x, 0.0] for x in customers]),
        depot_capacity=np.array(capacity or [1000.0] * len(depots)),
        opening_cost=np.array(opening, dtype=float),
        demand=np.array(demand or [1.0] * n),
        vehicle_capacity=vehicle,
        vehicle_fixed_cost=1.0,
    )


def _rollout(*instances):
    env = CLRPEnv()
    td = instances_to_tensordict(instances)
    actions, final = nearest_neighbor_rollout(env, td.clone())
    env.check_solution_validity(final, actions)
    return actions, final


def test_the_location_step_weighs_opening_cost_and_then_routes_to_the_nearest_node():
    """First depot: opening cost + distance to its nearest unserved customer (depot 1, cheap,
    beats depot 0 with a nearer customer); a route goes to the nearest customer and returns
    when the depot is the nearest node; a used depot costs no opening again (depot 1 again
    at 0 + 5 beats depot 0 at 5 + 0.5); the last customer goes back to its depot."""
    instance = _line(depots=[0.0, 10.0], opening=[5.0, 1.0], customers=[0.5, 1.5, 9.0, 5.0])
    actions, final = _rollout(instance)
    # nodes: depots 0, 1; customers 2 (x 0.5), 3 (x 1.5), 4 (x 9), 5 (x 5)
    assert actions[0].tolist() == [1, 4, 1, 1, 5, 3, 2, 1]
    assert bool(final["done"].all())


def test_routing_returns_to_the_depot_when_it_is_the_only_choice():
    """A full vehicle can only go back: the depot is the only feasible node."""
    instance = _line(
        depots=[0.0], opening=[1.0], customers=[1.0, 2.0], demand=[10.0, 10.0], vehicle=10.0
    )
    actions, _ = _rollout(instance)
    # one customer per route: depot 0, customer 1 (x 1), back, depot 0, customer 2, back
    assert actions[0].tolist() == [0, 1, 0, 0, 2, 0]


def test_an_unused_depot_pays_its_opening_cost_only_until_it_is_used():
    """Depot 0 is opened first (cheaper by opening + distance); once used it costs only its
    distance, so it is chosen again over depot 1 at the far end (0 + 4 < 3 + 1.5)."""
    instance = _line(depots=[0.0, 10.0], opening=[1.0, 3.0], customers=[1.0, 4.0, 8.5],
                     demand=[10.0, 10.0, 10.0], vehicle=10.0)  # fmt: skip
    actions, _ = _rollout(instance)
    # nodes: depots 0, 1; customers 2 (x 1), 3 (x 4), 4 (x 8.5)
    assert actions[0].tolist() == [0, 2, 0, 0, 3, 0, 1, 4, 1]


def test_a_batch_gives_valid_solutions_row_by_row_and_pads_finished_rows():
    """Each row of a batch is rolled out as alone; rows that finish first are padded."""
    instances = [random_instance(12, seed=s, num_depots=3) for s in range(4)]
    actions, final = _rollout(*instances)
    assert actions.dtype == torch.int64 and actions.shape[0] == 4
    assert bool(final["done"].all())
    for row, instance in enumerate(instances):
        alone, _ = _rollout(instance)
        length = alone.shape[1]
        assert actions[row, :length].tolist() == alone[0].tolist()
        assert (actions[row, length:] == 0).all()  # the padding action
