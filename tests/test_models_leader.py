"""POMO with the leader reward (clrp_rl4co/models/leader.py): the advantage from its
definition, the loss against RL4CO's POMO, and building it."""

import math

import pytest
import torch
from rl4co.models import POMO
from test_imitation import TINY

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp import generate_dataset
from clrp_rl4co.models import LeaderRewardPOMO, algorithm_of, build_model, build_policy
from clrp_rl4co.models.leader import leader_advantage


def test_the_leaders_advantage_is_multiplied_and_the_others_keep_pomos():
    reward = torch.tensor([[1.0, 3.0, 2.0], [5.0, 5.0, 2.0]])
    # means 2 and 4: POMO's advantages [-1, 1, 0] and [1, 1, -2]; leaders: index 1 of the
    # first row, both tied 5s of the second
    expected = torch.tensor([[-1.0, 3.0, 0.0], [3.0, 3.0, -2.0]])
    assert torch.equal(leader_advantage(reward, 3.0), expected)
    assert torch.equal(leader_advantage(reward, 1.0), reward - reward.mean(-1, keepdim=True))


@pytest.fixture
def env():
    return CLRPEnv(generator_params={"preset": "clrp10"}, check_actions=False)


def test_the_loss_is_reinforce_on_the_leader_advantage_and_pomos_at_weight_one(env):
    reward = torch.tensor([[-10.0, -8.0, -9.0, -8.5], [-7.0, -7.5, -6.0, -9.0]])
    log_likelihood = torch.tensor([[-2.0, -1.0, -3.0, -0.5], [-1.5, -2.5, -0.25, -4.0]])
    policy = build_policy("drlhq", **TINY)
    model = LeaderRewardPOMO(env, policy, leader_weight=5.0)
    out = model.calculate_loss(None, {}, {}, reward, log_likelihood)
    # mean rewards -8.875 and -7.375; leaders -8.0 (row 0, index 1), -6.0 (row 1, index 2)
    advantage = torch.tensor(
        [[-1.125, 0.875 * 5, -0.125, 0.375], [0.375, -0.125, 1.375 * 5, -1.625]]
    )
    assert out["loss"].item() == pytest.approx(-(advantage * log_likelihood).mean().item())
    assert out["reinforce_loss"] is out["loss"]  # RL4CO's name of the REINFORCE term
    # RL4CO's signature: without the tensors, the loss reads them from the policy's output
    read = model.calculate_loss(None, {}, {"reward": reward, "log_likelihood": log_likelihood})
    assert read["loss"].item() == out["loss"].item()
    stock = POMO(env, policy=policy).calculate_loss(None, {}, {}, reward, log_likelihood)
    plain = LeaderRewardPOMO(env, policy, leader_weight=1.0)
    ours = plain.calculate_loss(None, {}, {}, reward, log_likelihood)
    assert ours["loss"].item() == pytest.approx(stock["loss"].item())


def test_a_training_step_with_the_leader_reward_moves_the_weights(env):
    torch.manual_seed(0)
    policy = build_policy("drlhq", **TINY)
    model = build_model(env, policy, algorithm="pomo", num_augment=1, leader_weight=4.0)
    assert isinstance(model, LeaderRewardPOMO) and model.leader_weight == 4.0
    assert algorithm_of(model) == "pomo"  # a POMO with another advantage
    assert model.num_augment == 1  # POMO's arguments reach POMO
    loss = model.shared_step(generate_dataset(env.generator, 3, 7), 0, phase="train")["loss"]
    assert math.isfinite(loss.item())
    loss.backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in policy.parameters())


def test_build_model_without_a_weight_is_pomo():
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    model = build_model(env, build_policy("drlhq", **TINY), algorithm="pomo")
    assert type(model) is POMO


@pytest.mark.parametrize("weight", [0.5, float("nan"), float("inf")])
def test_a_weight_below_one_or_not_finite_is_refused(env, weight):
    with pytest.raises(ValueError, match=r"leader_weight: must be a finite number >= 1, got"):
        LeaderRewardPOMO(env, build_policy("drlhq", **TINY), leader_weight=weight)


def test_the_leader_weight_is_pomos_option_only(env):
    with pytest.raises(ValueError, match="leader_weight: POMO's option, not 'reinforce''s"):
        build_model(env, build_policy("drlhq", **TINY), algorithm="reinforce", leader_weight=2.0)
