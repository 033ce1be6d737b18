"""POMO with a leader reward: the best start of each instance weighs more in the gradient.

Multistart decoding keeps the best of an instance's N rollouts, so what counts is the best
rollout, not the mean. Leader Reward (Wang, Cheng, Li and Sun, "Leader Reward for POMO-Based
Neural Combinatorial Optimization", 2024) multiplies the advantage of that best rollout (the
leader) by a weight above 1 in POMO's REINFORCE loss; the other rollouts keep POMO's shared
baseline advantage. The rollouts cost the same, so the step costs what POMO's costs.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from rl4co.models import POMO
from tensordict import TensorDict


def leader_advantage(reward: torch.Tensor, leader_weight: float) -> torch.Tensor:
    """POMO's shared-baseline advantage with the leaders' multiplied by ``leader_weight``.

    Args:
        reward: [batch, N] reward of each instance's N rollouts (higher is better).
        leader_weight: the leaders' factor (1: POMO's advantage).

    Returns:
        [batch, N]: ``reward - mean over N``, times ``leader_weight`` where a rollout's reward
        is its instance's largest (every rollout that ties for the largest is a leader: their
        solutions are equally good).
    """
    advantage = reward - reward.mean(dim=-1, keepdim=True)
    is_leader = reward == reward.max(dim=-1, keepdim=True).values
    return torch.where(is_leader, advantage * leader_weight, advantage)


class LeaderRewardPOMO(POMO):
    """RL4CO's POMO whose training loss takes :func:`leader_advantage`.

    Validation and test are POMO's (multistart, augmentation). RL4CO's ``advantage_scaler``
    applies after the leaders' weighting, as it applies to POMO's advantage.

    Args:
        env: the environment.
        policy: the policy to train.
        leader_weight: the leaders' factor, at least 1 (1: POMO's loss).
        **kwargs: POMO's.

    Raises:
        ValueError: ``leader_weight`` below 1 or not finite (naming it).
    """

    def __init__(self, env, policy: torch.nn.Module, *, leader_weight: float, **kwargs: Any):
        weight = float(leader_weight)
        if not (math.isfinite(weight) and weight >= 1.0):
            raise ValueError(f"leader_weight: must be a finite number >= 1, got {leader_weight!r}")
        super().__init__(env, policy=policy, **kwargs)
        self.leader_weight = weight

    def calculate_loss(
        self,
        td: TensorDict,
        batch: TensorDict,
        policy_out: dict,
        reward: torch.Tensor | None = None,
        log_likelihood: torch.Tensor | None = None,
    ) -> dict:
        """The REINFORCE loss with :func:`leader_advantage` on [batch, N] rewards and log
        likelihoods (``policy_out``'s where not given); ``policy_out`` gains ``loss``."""
        reward = policy_out["reward"] if reward is None else reward
        log_likelihood = policy_out["log_likelihood"] if log_likelihood is None else log_likelihood
        advantage = self.advantage_scaler(leader_advantage(reward, self.leader_weight))
        loss = -(advantage * log_likelihood).mean()
        policy_out.update({"loss": loss, "reinforce_loss": loss})
        return policy_out
