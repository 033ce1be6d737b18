"""Transitions, masks (rules 1-5), padding, dead ends and RL4CO hooks on hand-made instances."""

import numpy as np
import pytest
import torch
from rl4co.data.transforms import StateAugmentation
from rollout import random_rollout

from clrp_rl4co import CLRPEnv, CLRPInstance
from clrp_rl4co.data import instances_to_tensordict


def make_td(depot_locs, customer_locs, capacity, opening, demand, q=10.0, fixed=1.0, batch=1):
    inst = CLRPInstance(
        depot_locs=np.array(depot_locs, float),
        customer_locs=np.array(customer_locs, float),
        depot_capacity=np.array(capacity, float),
        opening_cost=np.array(opening, float),
        demand=np.array(demand, float),
        vehicle_capacity=q,
        vehicle_fixed_cost=fixed,
    )
    return instances_to_tensordict([inst] * batch, normalize_locs=False)


def step(env, td, action):
    td = td.clone()
    action = torch.as_tensor(action, dtype=torch.long).expand(td.batch_size[0])
    td.set("action", action.clone())
    return env.step(td)["next"]


@pytest.fixture
def env():
    return CLRPEnv()


@pytest.fixture
def small():
    # depots 0, 1; customers 2, 3, 4 (demands 4, 5, 6); vehicle capacity 10
    return make_td(
        depot_locs=[[0, 0], [1, 0]],
        customer_locs=[[0, 1], [1, 1], [0.5, 0.5]],
        capacity=[9, 20],
        opening=[3, 7],
        demand=[4, 5, 6],
    )


def test_reset_starts_at_location_step(env, small):
    td = env.reset(small)
    assert td["is_location_step"].all()
    # rule 5: every depot can serve the smallest unserved demand (4); no customer at a location step
    assert td["action_mask"].tolist() == [[True, True, False, False, False]]
    assert not td["done"].any()


def test_leaving_depot_sets_load_to_min_of_vehicle_and_depot(env, small):
    td = step(env, env.reset(small), 0)  # depot 0 has capacity 9 < q = 10
    assert td["vehicle_load"].item() == 9
    assert td["route_depot"].item() == 0
    assert not td["is_location_step"].any()
    assert td["depot_used"].tolist() == [[True, False]]
    # rule 4: the depot just picked is masked; rule 2: the other depot too
    assert td["action_mask"].tolist() == [[False, False, True, True, True]]
    assert td["cost_opening"].item() == 3 and td["cost_vehicles"].item() == 1
    assert td["cost_routing"].item() == 0
    td = step(env, env.reset(small), 1)
    assert td["vehicle_load"].item() == 10


def test_serving_updates_load_depot_capacity_and_masks(env, small):
    td = step(env, step(env, env.reset(small), 0), 3)  # customer 1 (demand 5)
    assert td["vehicle_load"].item() == 4
    assert td["remaining_depot_capacity"].tolist() == [[4, 20]]
    assert td["served"].tolist() == [[False, True, False]]
    assert td["current_route"].tolist() == [[False, True, False]]
    # rule 1 (served masked), rule 3 (demand 6 > load 4), departure depot allowed again
    assert td["action_mask"].tolist() == [[True, False, True, False, False]]
    assert td["cost_routing"].item() == pytest.approx(np.sqrt(2))


def test_closing_route_and_location_step_rule_5(env, small):
    td = env.reset(small)
    for a in (0, 3, 0):
        td = step(env, td, a)
    assert td["is_location_step"].all()
    assert td["last_route"].tolist() == [[False, True, False]]
    assert td["current_route"].tolist() == [[False, False, False]]
    # depot 0 has 4 left >= smallest unserved demand 4: allowed; depot 1 allowed
    assert td["action_mask"].tolist() == [[True, True, False, False, False]]
    td = step(env, td, 0)  # depot 0 again: opening cost is not paid twice
    assert td["cost_opening"].item() == 3 and td["num_routes"].item() == 2
    assert td["vehicle_load"].item() == 4
    assert td["action_mask"].tolist() == [[False, False, True, False, False]]


def test_location_rule_5_masks_depot_below_smallest_demand(env, small):
    td = env.reset(small)
    for a in (0, 2, 0):  # depot 0 serves demand 4: 5 left; smallest unserved is 5
        td = step(env, td, a)
    assert td["action_mask"].tolist() == [[True, True, False, False, False]]
    for a in (0, 3, 0):  # depot 0 now has 0 left
        td = step(env, td, a)
    assert td["action_mask"].tolist() == [[False, True, False, False, False]]


def test_done_padding_is_a_free_no_op(env, small):
    actions = [1, 2, 3, 1, 1, 4, 1]
    td = env.reset(small)
    for a in actions:
        td = step(env, td, a)
    assert td["done"].all() and not td["infeasible"].any()
    # the only action: node 0 (RL4CO's padding), although the vehicle is back at depot 1
    assert td["action_mask"].tolist() == [[True, False, False, False, False]]
    before = td.clone()
    after = step(env, td, 0)
    for key in (
        "cost_opening",
        "cost_vehicles",
        "cost_routing",
        "served",
        "current_node",
        "remaining_depot_capacity",
        "vehicle_load",
        "num_routes",
        "action_mask",
    ):
        assert torch.equal(after[key], before[key]), key
    padded = torch.tensor([actions + [0, 0, 0]])
    env.check_solution_validity(after, padded)
    assert env.get_reward(after, padded).item() == pytest.approx(env.get_reward(td, padded).item())
    # a finished instance ignores any action (sequences padded another way replay too)
    assert torch.equal(step(env, td, 3)["cost_routing"], before["cost_routing"])
    replayed = env.rollout_actions(small, torch.tensor([actions + [1, 1]]))
    assert replayed["cost_routing"].item() == pytest.approx(before["cost_routing"].item())


def test_step_is_out_of_place(env, small):
    td = env.reset(small)
    snapshot = {k: v.clone() for k, v in td.items()}
    td.set("action", torch.tensor([0]))
    nxt = env.step(td)["next"]
    assert nxt is not td
    for key, value in snapshot.items():
        assert torch.equal(td[key], value), f"{key} was modified in place"


def test_masked_action_raises_with_batch_index_and_action(env, small):
    td = env.reset(small.expand(3).clone())
    opened = step(env, td, [0, 0, 1])
    opened.set("action", torch.tensor([2, 0, 3]))  # row 1: back to the depot just picked
    with pytest.raises(ValueError, match=r"action 0 is infeasible for batch index 1 \(routing"):
        env.step(opened)
    # a customer is accepted only at the reset state (a start action), not at a later
    # location step
    closed = step(env, step(env, td, [0, 0, 0]), [2, 2, 2])
    closed = step(env, closed, [0, 0, 0])
    closed.set("action", torch.tensor([1, 3, 1]))
    with pytest.raises(ValueError, match=r"action 3 is infeasible for batch index 1 \(location"):
        env.step(closed)
    loose = CLRPEnv(check_actions=False)  # the check can be switched off for speed
    td.set("action", torch.tensor([0, 1, 1]))
    assert loose.step(td)["next"]["route_depot"].tolist() == [[0], [1], [1]]


def test_start_action_serves_its_customer_first_from_a_depot_that_holds_it(env, small):
    small["depot_capacity"] = torch.tensor([[5.0, 20.0]])  # depot 0 cannot hold demand 6
    td = env.reset(small.expand(2).clone())
    after = step(env, td, [4, 3])  # start customers: node 4 (demand 6), node 3 (demand 5)
    assert after["is_location_step"].all() and (after["num_routes"] == 0).all()
    assert after["start_customer"].reshape(-1).tolist() == [4, 3]
    assert torch.equal(after["current_node"], td["current_node"])
    assert (CLRPEnv.cost_parts(after)["total"] == 0).all()
    assert after["action_mask"].tolist() == [
        [False, True, False, False, False],
        [True, True, False, False, False],
    ]
    routing = step(env, after, [1, 0])
    assert routing["action_mask"].tolist() == [
        [False, False, False, False, True],
        [False, False, False, True, False],
    ]
    served = step(env, routing, [4, 3])
    # free again (rules 1-5): row 0 has load 4 left (customer 2 fits, 3 does not); row 1's
    # depot 0 has nothing left after demand 5, so only the return to it
    assert served["action_mask"].tolist() == [
        [False, True, True, False, False],
        [True, False, False, False, False],
    ]
    # the start action is a step of the sequence: the reward replays it
    actions = torch.tensor([[4, 1, 4, 2, 1, 1, 3, 1]])
    final = env.rollout_actions(small, actions)
    assert final["done"].all() and final["served"].all()
    env.check_solution_validity(small, actions)


def test_reset_of_a_reset_state_works(env, small):
    td = env.reset(small)
    td2 = env.reset(step(env, td, 0))
    assert torch.equal(td2["action_mask"], td["action_mask"])
    assert td2["is_location_step"].all() and (td2["cost_opening"] == 0).all()


def test_dead_end_finishes_with_infeasible_flag_and_penalty(env):
    # depot 0 (cap 5) and depot 1 (cap 3), demands 3 and 4: total 7 <= 8 passes reset, but
    # after depot 0 serves the 3, no depot can take the 4: a bin-packing dead end.
    td0 = make_td([[0, 0], [3, 0]], [[0, 1], [0, 2]], [5, 3], [1, 1], [3, 4], q=10)
    td = env.reset(td0)
    for a in (0, 2, 0):
        td = step(env, td, a)
    assert td["done"].all() and td["infeasible"].all()
    assert td["action_mask"].sum().item() == 1 and td["action_mask"][0, 0]
    parts = env.cost_parts(td)
    span = np.hypot(3, 2)
    assert parts["penalty"].item() == pytest.approx(1 + 1 + 2 * span)
    assert parts["total"].item() == pytest.approx(1 + 1 + 2 + 1 + 1 + 2 * span)
    with pytest.raises(ValueError, match="customer 1 .* not served"):
        env.check_solution_validity(td, torch.tensor([[0, 2, 0]]))


def test_get_reward_replays_actions_from_an_initial_state(env, small):
    actions = torch.tensor([[1, 2, 3, 1, 1, 4, 1]])
    reward = env.get_reward(env.reset(small), actions)
    expected = 7 + 2 + (1 + np.sqrt(2) + 1) + 2 * np.hypot(0.5, 0.5)
    assert reward.item() == pytest.approx(-expected, rel=1e-6)
    with pytest.raises(ValueError, match="infeasible for batch index 0"):
        env.get_reward(env.reset(small), torch.tensor([[1, 1]]))


@pytest.mark.parametrize(
    "actions,message",
    [
        ([0, 2, 1, 1, 3, 1, 1, 4, 1], "returns to depot 1"),
        ([0, 2, 0, 1, 2, 3, 1, 1, 4, 1], "served 2 times"),
        ([0, 2, 0, 3, 1, 4, 1], "outside a route"),
        ([2, 0, 3, 2, 0, 1, 4, 1], "start action 2 but the first customer served is node 3"),
        ([3, 1, 3, 2, 1, 0, 4, 0], None),
        ([1, 2, 3, 1, 1, 4], "not closed"),
        ([1, 2, 3, 1, 1, 4, 1, 0, 0, 1], None),
        ([0, 2, 0, 0, 0, 1, 3, 1, 1, 4, 1], "empty route"),
        ([1, 2, 3, 4, 1], "carries 15"),
        ([0, 2, 3, 0, 1, 4, 1], "depot 0 serves 9"),
        ([1, 2, 3, 1, 7], "not a node index"),
    ],
)
def test_validity_names_the_violation(env, actions, message):
    td = make_td([[0, 0], [1, 0]], [[0, 1], [1, 1], [0.5, 0.5]], [8, 20], [3, 7], [4, 5, 6])
    if message is None:
        env.check_solution_validity(td, torch.tensor([actions]))
    else:
        with pytest.raises(ValueError, match=message):
            env.check_solution_validity(td, torch.tensor([actions]))


def test_validity_is_vectorised_and_names_the_instance(env, small):
    td = small.expand(3).clone()
    actions = torch.tensor([[1, 2, 3, 1, 1, 4, 1], [1, 2, 3, 1, 1, 4, 1], [1, 2, 3, 1, 1, 3, 1]])
    with pytest.raises(ValueError, match="instance 2: customer 2 .* not served"):
        env.check_solution_validity(td, actions)


def test_multistart_hooks(env):
    td = env.reset(batch_size=[3])
    assert env.get_num_starts(td) == 20
    starts = env.select_start_nodes(td, 20)
    assert starts.shape == (60,)
    assert starts[:3].tolist() == [5, 5, 5] and starts[-1].item() == 24


def test_augmentation_does_not_change_the_reward(env):
    td = env.reset(batch_size=[4])
    aug = StateAugmentation(num_augment=8)(td)
    assert not torch.allclose(aug["locs"][4:8], td["locs"])
    actions, final = random_rollout(env, td, seed=0)
    actions8 = actions.repeat(8, 1)
    r = env.get_reward(final, actions)
    r8 = env.get_reward(env.reset(aug), actions8)
    assert torch.allclose(r8, r.repeat(8))


def test_batch_size_one_and_any_size(env):
    td = make_td([[0.1, 0.2]], [[0.3, 0.4]], [5], [2], [5], q=5)
    actions, final = random_rollout(env, td)
    assert actions.tolist() == [[0, 1, 0]]
    assert env.get_reward(final, actions).item() == pytest.approx(-(2 + 1 + 2 * np.hypot(0.2, 0.2)))


def test_render_writes_a_picture(env, tmp_path):
    import matplotlib.pyplot as plt  # the Agg backend: MPLBACKEND in conftest.py

    td = env.reset(batch_size=[2])
    actions, final = random_rollout(env, td)
    ax = env.render(final, actions)
    assert "cost" in ax.get_title()
    path = tmp_path / "clrp.png"
    ax.figure.savefig(path)
    plt.close(ax.figure)
    assert path.stat().st_size > 1000


def test_specs_describe_the_state(env):
    td = env.reset(batch_size=[2])
    for key in ("locs", "remaining_depot_capacity", "is_location_step", "action_mask"):
        assert key in env.observation_spec.keys()
        assert env.observation_spec[key].shape == td[key].shape[1:]


def test_dead_end_penalty_rounds_the_span_like_an_arc(env):
    # the dead end above on a rounded instance whose bounding box is 0.07 wide: its diagonal
    # costs ceil(100 * 0.07) = 7 (float64's 100 * 0.07 is 7.000000000000001)
    td0 = make_td([[0, 0], [0.07, 0]], [[0, 0], [0.07, 0]], [5, 3], [1, 1], [3, 4], q=10)
    td0["rounded_costs"][:] = True
    td = env.reset(td0)
    for a in (0, 2, 0):
        td = step(env, td, a)
    assert td["infeasible"].all()
    assert env.cost_parts(td)["penalty"].item() == 1 + 1 + 2 * 7
