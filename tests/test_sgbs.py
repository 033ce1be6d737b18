"""SGBS on CLRP (DRLHQ) and on RL4CO's CVRP (stock AttentionModelPolicy)."""

import pytest
import torch
from rl4co.envs import CVRPEnv
from rl4co.models.zoo.am.policy import AttentionModelPolicy

from clrp_rl4co import CLRPEnv
from clrp_rl4co.envs.clrp import generate_dataset
from clrp_rl4co.policies import DRLHQPolicy
from clrp_rl4co.search import sgbs


def _clrp(batch, seed=0):
    torch.manual_seed(seed)
    env = CLRPEnv(generator_params={"preset": "clrp20"})
    policy = DRLHQPolicy(embed_dim=32, num_encoder_layers=1, num_heads=4, feedforward_hidden=64)
    return env, policy, generate_dataset(env.generator, batch, seed=seed)


def _cvrp(batch, seed=0):
    torch.manual_seed(seed)
    env = CVRPEnv(generator_params={"num_loc": 20})
    policy = AttentionModelPolicy(
        env_name="cvrp", embed_dim=32, num_encoder_layers=1, num_heads=4, feedforward_hidden=64
    )
    return env, policy, env.generator(batch)


def _multistart_greedy(env, policy, td):
    out = policy(env.reset(td.clone()), env, decode_type="multistart_greedy", return_actions=True)
    num_starts = out["reward"].shape[0] // td.batch_size[0]
    reward = out["reward"].reshape(num_starts, -1)
    best = reward.argmax(0)
    rows = best * td.batch_size[0] + torch.arange(td.batch_size[0])
    return reward.amax(0), out["actions"][rows]


@pytest.mark.parametrize("make", [_clrp, _cvrp])
def test_beta_gamma_one_reproduces_greedy_multistart(make):
    env, policy, td = make(6)
    policy.eval()
    with torch.no_grad():
        reward, actions = _multistart_greedy(env, policy, td)
    result = sgbs(env, policy, td, beta=1, gamma=1, augment=1)
    assert torch.equal(result.reward, reward)
    length = actions.shape[-1]
    assert torch.equal(result.actions[:, :length], actions)
    assert result.stats["simulation_steps"] == 0


@pytest.mark.parametrize("make", [_clrp, _cvrp])
def test_sgbs_beats_greedy_multistart_and_is_valid(make):
    env, policy, td = make(32)
    result = sgbs(env, policy, td, beta=4, gamma=4, augment=1)
    assert (result.reward >= result.greedy_reward).all()
    assert result.reward.mean() > result.greedy_reward.mean()
    state = env.reset(td.clone())
    env.check_solution_validity(state, result.actions)
    replay = (
        env.get_reward(env.reset(td.clone()), result.actions)
        if env.name == "clrp"
        else (env.get_reward(state, result.actions))
    )
    assert torch.allclose(replay, result.reward)


def test_sgbs_with_augmentation_and_variant_three_children():
    env, policy, td = _clrp(4)
    with torch.no_grad():
        greedy, _ = _multistart_greedy(env, policy, td)
    for gamma in (3, 4):
        result = sgbs(env, policy, td, beta=4, gamma=gamma, augment=8, max_batch=256)
        assert (result.reward >= greedy - 1e-5).all()
        assert (result.greedy_reward >= greedy - 1e-5).all()  # best over 8 copies
        env.check_solution_validity(env.reset(td.clone()), result.actions)


def test_one_batched_decoder_call_per_simulation_step():
    env, policy, td = _clrp(8)
    calls = []
    handle = policy.decoder.register_forward_hook(lambda *a: calls.append(1))
    try:
        result = sgbs(env, policy, td, beta=4, gamma=4, augment=1)
    finally:
        handle.remove()
    stats = result.stats
    assert len(calls) == stats["expansions"] + stats["simulation_steps"] + stats["multistart_steps"]
    assert stats["decoder_calls"] == stats["expansions"] + stats["simulation_steps"]
    # many children are simulated per step: not one call per beam node
    assert stats["simulated_children"] >= 8 * 4 * 3
    assert stats["simulation_steps"] < stats["simulated_children"]


def test_bad_parameters():
    env, policy, td = _clrp(2)
    with pytest.raises(ValueError, match="beta and gamma must be >= 1"):
        sgbs(env, policy, td, beta=0)


def test_sgbs_decode_spec_in_evaluation():
    from clrp_rl4co.models import DecodeSpec, decode_batch

    spec = DecodeSpec.parse("sgbs:4x3+aug8")
    assert spec.sgbs == (4, 3) and spec.augment == "aug8"
    assert DecodeSpec.parse("sgbs").sgbs == (4, 4)
    with pytest.raises(ValueError, match="<beta>x<gamma>"):
        DecodeSpec.parse("sgbs:4")
    env, policy, td = _clrp(3)
    actions, parts, _ = decode_batch(policy, env, td, "sgbs:2x2")
    env.check_solution_validity(env.reset(td.clone()), actions)
    greedy_actions, greedy_parts, _ = decode_batch(policy, env, td, "multistart_greedy")
    assert (parts["total"] <= greedy_parts["total"] + 1e-9).all()
