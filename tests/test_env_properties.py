"""Property-based tests over random sizes, capacities and batch sizes."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from rollout import oracle_costs, random_rollout

from clrp_rl4co import CLRPEnv, CLRPInstance
from clrp_rl4co.data import instances_to_tensordict


@st.composite
def batches(draw):
    num_depots = draw(st.integers(1, 6))
    num_customers = draw(st.integers(1, 25))
    batch = draw(st.integers(1, 6))
    q = draw(st.sampled_from([5.0, 10.0, 70.0]))
    slack = draw(st.floats(1.0, 3.0))
    integer_demand = draw(st.booleans())
    rounded = draw(st.booleans())
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    instances = []
    for _ in range(batch):
        demand = rng.uniform(0.5, q, num_customers)
        if integer_demand:
            demand = np.maximum(1.0, np.floor(demand))
        # each depot holds its share of a hidden assignment of the customers times the slack:
        # every instance can be served (the env's instance rules accept it), and with a slack
        # near 1 random rollouts still dead-end
        owner = rng.integers(num_depots, size=num_customers)
        capacity = np.bincount(owner, weights=demand, minlength=num_depots) * slack + 1e-3
        instances.append(
            CLRPInstance(
                depot_locs=rng.uniform(0, 50, (num_depots, 2)),
                customer_locs=rng.uniform(0, 50, (num_customers, 2)),
                depot_capacity=capacity,
                opening_cost=rng.uniform(0, 100, num_depots),
                demand=demand,
                vehicle_capacity=q,
                vehicle_fixed_cost=float(rng.uniform(0, 10)),
                rounded_costs=rounded,
            )
        )
    return instances, seed


@settings(max_examples=60, deadline=None)
@given(batches())
def test_random_rollouts_are_valid_and_match_the_oracle(case):
    instances, seed = case
    env = CLRPEnv()
    td = instances_to_tensordict(instances)
    actions, final = random_rollout(env, td, seed=seed % 1000)  # asserts masks never empty
    infeasible = final["infeasible"].reshape(-1)
    assert torch.equal(infeasible, (~final["served"]).any(-1))
    ok = ~infeasible
    if ok.any():
        env.check_solution_validity(final[ok], actions[ok])
        expected = oracle_costs(td[ok], actions[ok])
        total = env.cost_parts(final)["total"][ok].numpy()
        # opening and fixed costs are float32 in the state: agreement to float32 precision
        np.testing.assert_allclose(total, expected.sum(-1), rtol=1e-6)
        np.testing.assert_allclose(
            -env.get_reward(final, actions)[ok].numpy(), expected.sum(-1), rtol=1e-6
        )
    for b in infeasible.nonzero()[:, 0].tolist():
        with pytest.raises(ValueError):
            env.check_solution_validity(final[b : b + 1], actions[b : b + 1])
    # the same routes through the solution object give the same cost
    from clrp_rl4co import CLRPSolution

    for b in ok.nonzero()[:, 0].tolist()[:2]:
        sol = CLRPSolution.from_actions(actions[b].tolist(), instances[b].num_depots)
        sol.check(instances[b])
        assert sol.cost(instances[b]).total == pytest.approx(
            float(env.cost_parts(final)["total"][b]), rel=1e-6
        )
