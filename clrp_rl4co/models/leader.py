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
from rl4co.data.transforms import StateAugmentation
from rl4co.models import POMO
from rl4co.utils.ops import unbatchify
from tensordict import TensorDict

#: Copies per instance a training step may decode: 1 (the instance as drawn, POMO's training)
#: or 8 (its dihedral copies, as x8 decoding uses).
TRAIN_AUGMENTS = (1, 8)


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
        train_augment: copies of each instance a training step decodes (:data:`TRAIN_AUGMENTS`):
            1, POMO's training; 8, the copies validation decodes (``augment_fn``'s), all
            8 x N rollouts of an instance sharing one baseline and one leader.
        **kwargs: POMO's.

    Raises:
        ValueError: ``leader_weight`` below 1 or not finite, or ``train_augment`` not in
            :data:`TRAIN_AUGMENTS` (naming it).
    """

    def __init__(
        self,
        env,
        policy: torch.nn.Module,
        *,
        leader_weight: float,
        train_augment: int = 1,
        **kwargs: Any,
    ):
        weight = float(leader_weight)
        if not (math.isfinite(weight) and weight >= 1.0):
            raise ValueError(f"leader_weight: must be a finite number >= 1, got {leader_weight!r}")
        if train_augment not in TRAIN_AUGMENTS:
            raise ValueError(
                f"train_augment: must be {' or '.join(map(str, TRAIN_AUGMENTS))}, "
                f"got {train_augment!r}"
            )
        super().__init__(env, policy=policy, **kwargs)
        self.leader_weight = weight
        self.train_augment = int(train_augment)
        # validation's copies (POMO's arguments as it recorded them, its defaults included)
        self.train_augmentation = (
            StateAugmentation(
                num_augment=self.train_augment,
                augment_fn=self.hparams["augment_fn"],
                first_aug_identity=self.hparams["first_aug_identity"],
                feats=self.hparams["feats"],
            )
            if self.train_augment > 1
            else None
        )

    def shared_step(self, batch: Any, batch_idx: int, phase: str, dataloader_idx: int = None):
        """POMO's step; in training with ``train_augment`` copies, each instance's rollouts on
        all its copies form its group ([batch, copies x N] rewards into the loss)."""
        if phase != "train" or self.train_augmentation is None:
            return super().shared_step(batch, batch_idx, phase, dataloader_idx)
        td = self.env.reset(batch)
        n_start = self.env.get_num_starts(td) if self.num_starts is None else self.num_starts
        td = self.train_augmentation(td)
        out = self.policy(td, self.env, phase=phase, num_starts=n_start)
        shape = (self.train_augment, n_start)
        reward = unbatchify(out["reward"], shape).flatten(1)
        log_likelihood = unbatchify(out["log_likelihood"], shape).flatten(1)
        self.calculate_loss(td, batch, out, reward, log_likelihood)
        out.update({"max_reward": reward.max(dim=-1).values})
        return {"loss": out["loss"], **self.log_metrics(out, phase)}

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
