"""The dead-end penalty on a hand-made instance, with the expected value written from the env's
docstring: a dead-ended instance pays, per unserved customer, ``F + max_i O_i + 2 x`` where
``x`` is the diagonal of the instance's bounding box in arc-cost units (``ceil(100 d)`` for a
rounded instance)."""

import math

import numpy as np
import pytest
import torch

from clrp_rl4co import CLRPEnv, CLRPInstance
from clrp_rl4co.data import instances_to_tensordict

F = 10.0
OPENING = [2.0, 3.0, 9.0]  # unequal: the largest (9) is not the smallest (2)


def _instance(rounded: bool) -> CLRPInstance:
    # depots A (0, 0), B (0.5, 0), C (0, 0.3), each holding 4; customers c0..c2 of demand 1 near
    # them, c3 and c4 of demand 4. Total 11 <= 12 and every depot holds a 4: a valid instance.
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [0.5, 0.0], [0.0, 0.3]]),
        customer_locs=np.array([[0.0, 0.04], [0.5, 0.07], [0.03, 0.3], [0.25, 0.15], [0.4, 0.2]]),
        depot_capacity=np.array([4.0, 4.0, 4.0]),
        opening_cost=np.array(OPENING),
        demand=np.array([1.0, 1.0, 1.0, 4.0, 4.0]),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=F,
        rounded_costs=rounded,
    )


# each depot serves its demand-1 customer: then every depot has 3 left and c3, c4 (4 each)
# fit nowhere, a dead end with two unserved customers (customer j is node 3 + j)
ACTIONS = [0, 3, 0, 1, 4, 1, 2, 5, 2]


@pytest.mark.parametrize("rounded", [True, False])
def test_dead_end_penalty_from_its_definition(rounded):
    env = CLRPEnv()
    td = instances_to_tensordict([_instance(rounded)], normalize_locs=False)
    final = env.rollout_actions(td, torch.tensor([ACTIONS]))
    unserved = 2
    # guards: the rollout did dead-end, with more than one customer left and all depots open
    assert final["done"].all() and final["infeasible"].all()
    assert (~final["served"]).sum().item() == unserved
    assert final["depot_used"].all()

    diagonal = math.hypot(0.5, 0.3)  # bounding box [0, 0.5] x [0, 0.3]
    if rounded:
        x = 59.0  # ceil(100 * 0.58309...)
        routing = (4 + 4) + (7 + 7) + (3 + 3)  # ceil(100 d) per arc, there and back
    else:
        x = diagonal
        routing = 2 * (0.04 + 0.07 + 0.03)
    per_customer = F + max(OPENING) + 2 * x
    parts = env.cost_parts(final)
    assert final["infeasible_penalty"].item() == pytest.approx(per_customer, rel=1e-12)
    assert parts["penalty"].item() == pytest.approx(unserved * per_customer, rel=1e-12)
    assert parts["opening"].item() == sum(OPENING)
    assert parts["vehicles"].item() == 3 * F
    assert parts["routing"].item() == pytest.approx(routing, rel=1e-12)
    total = sum(OPENING) + 3 * F + routing + unserved * per_customer
    assert parts["total"].item() == pytest.approx(total, rel=1e-12)
    assert env.get_reward(final, torch.tensor([ACTIONS])).item() == pytest.approx(-total, rel=1e-6)
    if rounded:
        assert parts["total"].item() == 346  # 14 + 30 + 28 + 2 * (10 + 9 + 2 * 59)


def test_a_feasible_solution_pays_no_penalty():
    env = CLRPEnv()
    td = instances_to_tensordict([_instance(True)], normalize_locs=False)
    # c3 from A and c4 from B first, then the three small ones: nothing is left over
    actions = torch.tensor([[0, 6, 0, 1, 7, 1, 2, 3, 4, 5, 2]])
    final = env.rollout_actions(td, actions)
    assert final["done"].all() and not final["infeasible"].any()
    assert env.cost_parts(final)["penalty"].item() == 0


def test_penalty_counts_each_instances_own_unserved_customers():
    # a batch: the dead end (two unserved), the same dead end rounded, and a feasible solution
    env = CLRPEnv()
    td = instances_to_tensordict(
        [_instance(False), _instance(True), _instance(True)], normalize_locs=False
    )
    feasible = [0, 6, 0, 1, 7, 1, 2, 3, 4, 5, 2]
    actions = torch.tensor([ACTIONS + [0, 0], ACTIONS + [0, 0], feasible])
    final = env.rollout_actions(td, actions)
    assert final["infeasible"].reshape(-1).tolist() == [True, True, False]  # guard
    per_customer = [F + max(OPENING) + 2 * math.hypot(0.5, 0.3), F + max(OPENING) + 2 * 59.0]
    penalty = env.cost_parts(final)["penalty"].tolist()
    assert penalty == pytest.approx([2 * per_customer[0], 2 * per_customer[1], 0.0], rel=1e-12)


def test_penalty_uses_each_instances_own_box_and_largest_opening_cost():
    # the same dead end twice in one batch: shifted by (1, 2) (a bounding box away from the
    # origin, same diagonal), and with doubled opening costs (its own largest, 18)
    base = _instance(False)
    shifted = CLRPInstance(
        **{
            **vars(base),
            "depot_locs": base.depot_locs + [1.0, 2.0],
            "customer_locs": base.customer_locs + [1.0, 2.0],
        }
    )
    dearer = CLRPInstance(**{**vars(base), "opening_cost": 2 * np.array(OPENING)})
    env = CLRPEnv()
    td = instances_to_tensordict([shifted, dearer], normalize_locs=False)
    final = env.rollout_actions(td, torch.tensor([ACTIONS, ACTIONS]))
    assert final["infeasible"].all()  # guard
    diagonal = math.hypot(0.5, 0.3)
    expected = [2 * (F + 9 + 2 * diagonal), 2 * (F + 18 + 2 * diagonal)]
    assert env.cost_parts(final)["penalty"].tolist() == pytest.approx(expected, rel=1e-12)
