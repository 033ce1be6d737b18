"""The start scheme with depot capacities small enough that the start rule binds: after a start
action ``c`` the location step allows exactly the depots whose capacity holds ``c``'s demand
(the env docstring), and every start serves its customer first."""

import numpy as np
import torch
from rl4co.utils.ops import batchify

from clrp_rl4co import CLRPEnv, CLRPInstance
from clrp_rl4co.data import instances_to_tensordict
from clrp_rl4co.policies import DRLHQPolicy

CAPACITY = [11.0, 14.0, 17.0, 200.0]  # only depot 3 holds a demand of 18 or 19
NUM_CUSTOMERS = 8


def _instances(batch: int = 3):
    rng = np.random.default_rng(7)
    instances = [
        CLRPInstance(
            depot_locs=rng.random((4, 2)),
            customer_locs=rng.random((NUM_CUSTOMERS, 2)),
            depot_capacity=np.array(CAPACITY),
            opening_cost=np.array([1.0, 2.0, 3.0, 4.0]),
            demand=rng.integers(10, 20, NUM_CUSTOMERS).astype(float),
            vehicle_capacity=70.0,
            vehicle_fixed_cost=1.0,
        )
        for _ in range(batch)
    ]
    return instances_to_tensordict(instances, normalize_locs=False)


def _step(env, td, action):
    td.set("action", action)
    return env.step(td)["next"]


def test_location_mask_after_a_start_allows_exactly_the_depots_that_hold_it():
    env = CLRPEnv()
    td = env.reset(_instances())
    batch, num_depots = td.batch_size[0], len(CAPACITY)
    starts = env.select_start_nodes(td, NUM_CUSTOMERS)  # row s * B + b: customer s
    state = _step(env, batchify(td, NUM_CUSTOMERS), starts)
    start_demand = state["demand"].gather(-1, (starts - num_depots)[:, None])  # [S * B, 1]
    capacity = torch.tensor(CAPACITY)
    expected = capacity[None, :] >= start_demand
    # guard: the start rule binds -- rule 5 alone (capacity >= smallest unserved demand) allows
    # some depot that cannot hold the start customer
    rule5 = capacity[None, :] >= state["demand"].amin(-1, keepdim=True)
    assert (rule5 & ~expected).any()
    assert state["is_location_step"].all()
    assert torch.equal(state["action_mask"][:, :num_depots], expected)
    assert not state["action_mask"][:, num_depots:].any()
    # after the smallest allowed depot, the only routing action is the start customer
    assert starts.shape[0] == batch * NUM_CUSTOMERS
    routing = _step(env, state, expected.float().argmax(-1))
    forced = torch.zeros_like(routing["action_mask"])
    forced.scatter_(-1, starts[:, None], True)
    assert torch.equal(routing["action_mask"], forced)


def test_random_and_policy_multistart_rollouts_serve_each_start_first():
    env = CLRPEnv()
    td = _instances()
    batch, num_depots = td.batch_size[0], len(CAPACITY)
    demand = td["demand"]
    # a random policy over the env's masks, every start of every instance
    generator = torch.Generator().manual_seed(0)
    state = env.reset(batchify(td, NUM_CUSTOMERS))
    starts = env.select_start_nodes(env.reset(td), NUM_CUSTOMERS)
    actions = [starts]
    state = _step(env, state, starts)
    while not state["done"].all():
        probs = state["action_mask"].float()
        action = torch.multinomial(probs / probs.sum(-1, keepdim=True), 1, generator=generator)
        actions.append(action.squeeze(-1))
        state = _step(env, state, action.squeeze(-1))
    random_actions = torch.stack(actions, -1)
    torch.manual_seed(0)
    policy = DRLHQPolicy(embed_dim=16, num_encoder_layers=1, num_heads=2, feedforward_hidden=32)
    out = policy(env.reset(td), env, decode_type="multistart_greedy", return_actions=True)
    for sequences in (random_actions, out["actions"]):
        rows = sequences.shape[0]
        assert rows == batch * NUM_CUSTOMERS
        start = sequences[:, 0]
        assert torch.equal(start, starts)
        depot, first = sequences[:, 1], sequences[:, 2]
        assert (depot < num_depots).all() and torch.equal(first, start)
        start_demand = demand.repeat(NUM_CUSTOMERS, 1).gather(-1, (start - num_depots)[:, None])
        assert (torch.tensor(CAPACITY)[depot] >= start_demand.squeeze(-1)).all()
        env.check_solution_validity(env.reset(batchify(td, NUM_CUSTOMERS)), sequences)
