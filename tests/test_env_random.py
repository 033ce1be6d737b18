"""Random feasible policies on >= 10,000 generated instances and all 30 Prins instances:
every solution is valid, no mask is ever all False, the reward equals the numpy oracle."""

import numpy as np
import pytest
import torch
from rollout import oracle_costs, random_rollout

from clrp_rl4co import CLRPEnv, CLRPGenerator
from clrp_rl4co.data import instances_to_tensordict, prins_files, read_prodhon
from clrp_rl4co.envs.clrp import generate_dataset

# (preset, batch size): 10,420 generated instances, plus 2,000 tight-capacity ones below.
CASES = [
    ("clrp10", 4000),
    ("clrp20", 3000),
    ("clrp50", 2000),
    ("clrp100", 1200),
    ("clrp200", 100),
    ("clrp300", 50),
    ("clrp400", 40),
    ("clrp500", 30),
]


def _check_batch(env, td, seed):
    actions, final = random_rollout(env, td, seed=seed)
    feasible = ~final["infeasible"].reshape(-1)
    assert feasible.all(), "random policy dead-ended on a non-tight instance"
    env.check_solution_validity(final, actions)
    parts = env.cost_parts(final)
    expected = oracle_costs(td, actions)
    np.testing.assert_allclose(parts["opening"].numpy(), expected[:, 0], rtol=1e-6)
    np.testing.assert_allclose(parts["vehicles"].numpy(), expected[:, 1], rtol=1e-12)
    np.testing.assert_allclose(parts["routing"].numpy(), expected[:, 2], rtol=1e-9)
    reward = env.get_reward(final, actions)
    np.testing.assert_allclose(-reward.numpy(), expected.sum(-1), rtol=1e-6)
    return len(actions)


@pytest.mark.parametrize("seed,preset,batch", [(k, *case) for k, case in enumerate(CASES)])
def test_random_policy_generated(seed, preset, batch):
    env = CLRPEnv(generator_params={"preset": preset}, check_actions=True)
    td = generate_dataset(env.generator, batch, seed=seed)
    _check_batch(env, td, seed=1)


def test_random_policy_tight_capacity_dead_ends_are_flagged():
    gen = CLRPGenerator(preset="clrp20", tight_capacity=(1.05, 1.2))
    env = CLRPEnv(generator=gen)
    td = generate_dataset(gen, 2000, seed=7)
    ratio = td["depot_capacity"].sum(-1) / td["demand"].sum(-1)
    assert (ratio >= 1.05 - 1e-5).all() and (ratio <= 1.2 + 1e-5).all()
    actions, final = random_rollout(env, td, seed=3)
    infeasible = final["infeasible"].reshape(-1)
    unserved = (~final["served"]).any(-1)
    assert torch.equal(infeasible, unserved)
    assert infeasible.any(), "expected some dead ends with tight capacities"
    ok = ~infeasible
    assert ok.sum() > 1000
    env.check_solution_validity(final[ok], actions[ok])
    expected = oracle_costs(td[ok], actions[ok])
    reward = env.get_reward(final, actions)
    np.testing.assert_allclose(-reward[ok].numpy(), expected.sum(-1), rtol=1e-6)
    # dead-ended instances pay the penalty and fail validation
    parts = env.cost_parts(final)
    bad = infeasible.nonzero()[:, 0]
    assert (parts["penalty"][bad] > 0).all()
    assert (parts["penalty"][ok] == 0).all()
    with pytest.raises(ValueError, match="not served"):
        env.check_solution_validity(final[bad[:1]], actions[bad[:1]])


def test_random_policy_all_prins(benchmarks_root):
    files = prins_files(benchmarks_root)
    assert len(files) == 30
    env = CLRPEnv()
    for k, path in enumerate(files):
        inst = read_prodhon(path)
        td = instances_to_tensordict([inst] * 4)
        actions, final = random_rollout(env, td, seed=k)
        assert not final["infeasible"].any()
        env.check_solution_validity(final, actions)
        expected = oracle_costs(td, actions).sum(-1)
        # integer arc costs: the env's float64 total equals the oracle exactly
        np.testing.assert_array_equal(env.cost_parts(final)["total"].numpy(), expected)
