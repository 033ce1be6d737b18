"""RL4CO models (POMO, AttentionModel) for the CLRP policies, and the conventions training
shares: the algorithm of a model, its checkpoint metric, the paper's learning-rate schedule,
fixed validation sets, the policy config stored in checkpoints.

Policies themselves are built and loaded by :mod:`clrp_rl4co.policies` (``build_policy``,
``load_policy``), re-exported by :mod:`clrp_rl4co.models`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from lightning.pytorch import LightningModule
from lightning.pytorch.callbacks import Callback
from rl4co.models import POMO, AttentionModel
from tensordict import TensorDict

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp.dataset import generate_dataset, load_dataset, save_dataset
from clrp_rl4co.policies import policy_config, rotate45_augmentation

from .imitation import Imitation
from .leader import LeaderRewardPOMO

#: RL4CO algorithms by name: ``pomo`` (POMO: shared baseline over the N starts),
#: ``reinforce`` (``AttentionModel``: REINFORCE with a greedy rollout baseline) and
#: ``imitation`` (:class:`~.imitation.Imitation`: expert sequences' negative log-likelihood).
ALGORITHMS: dict[str, type[LightningModule]] = {
    "pomo": POMO,
    "reinforce": AttentionModel,
    "imitation": Imitation,
}

#: Augmentations POMO may apply at validation / test (``augment`` of :func:`build_model`).
AUGMENTS = ("dihedral8", "rotate45")


def step_lr_schedule(epochs: int, decay_at: float = 0.7, gamma: float = 0.1) -> dict:
    """RL4CO ``lr_scheduler`` arguments for the paper's schedule: the learning rate times
    ``gamma`` after the share ``decay_at`` of ``epochs`` (from epoch 701 of 1000)."""
    if int(epochs) < 1:
        raise ValueError(f"lr_schedule.epochs: must be >= 1, got {epochs!r}")
    if not 0.0 < float(decay_at) <= 1.0:
        raise ValueError(f"lr_schedule.decay_at: must be in (0, 1], got {decay_at!r}")
    milestone = max(1, int(round(decay_at * epochs)))
    return {
        "lr_scheduler": "MultiStepLR",
        "lr_scheduler_kwargs": {"milestones": [milestone], "gamma": float(gamma)},
    }


def build_model(
    env: CLRPEnv,
    policy: torch.nn.Module,
    algorithm: str = "pomo",
    num_augment: int = 8,
    augment: str = "dihedral8",
    lr_schedule: dict[str, Any] | None = None,
    leader_weight: float | None = None,
    train_augment: int = 1,
    **kwargs: Any,
) -> LightningModule:
    """An RL4CO LightningModule training ``policy`` on ``env``.

    ``algorithm``: ``"pomo"`` (RL4CO ``POMO``), ``"reinforce"`` (``AttentionModel``, rollout
    baseline unless ``baseline`` is given) or ``"imitation"`` (:class:`~.imitation.Imitation`;
    ``kwargs`` must hold its ``dataset``). ``num_augment`` / ``augment`` (POMO and imitation):
    the x``num_augment`` augmentation at validation / test, ``"dihedral8"`` (RL4CO) or
    ``"rotate45"`` (the paper's 45-degree rotations). ``lr_schedule``: keyword arguments of
    :func:`step_lr_schedule` (``epochs``, ``decay_at``, ``gamma``), or None for ``kwargs``'
    own ``lr_scheduler``. ``leader_weight`` (POMO only): train with the leader reward
    (:class:`~.leader.LeaderRewardPOMO`, the best start's advantage times this weight); None
    for POMO's loss. ``train_augment`` (POMO only): copies of each instance a training step
    decodes, 1 or 8 (:class:`~.leader.LeaderRewardPOMO`: all its copies' rollouts form one
    group); 8 with no ``leader_weight`` trains at weight 1. ``kwargs`` go to the model (batch
    sizes, data sizes, optimizer, ...).

    POMO and imitation log ``val/max_reward`` (best of the N starts, the model's multistart
    objective) next to ``val/reward`` (mean over starts); :func:`monitor_metric` names the one to
    select on."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm: unknown {algorithm!r}; choose one of {list(ALGORITHMS)}")
    if leader_weight is not None and algorithm != "pomo":
        raise ValueError(f"leader_weight: POMO's option, not {algorithm!r}'s")
    if train_augment != 1 and algorithm != "pomo":
        raise ValueError(f"train_augment: POMO's option, not {algorithm!r}'s")
    if lr_schedule is not None:
        if "lr_scheduler" in kwargs:
            raise ValueError("lr_schedule and lr_scheduler: give one of them, not both")
        kwargs.update(step_lr_schedule(**lr_schedule))
    if algorithm == "reinforce":
        kwargs.setdefault("baseline", "rollout")
        return AttentionModel(env, policy=policy, **kwargs)
    if augment not in AUGMENTS:
        raise ValueError(f"augment: unknown {augment!r}; choose one of {list(AUGMENTS)}")
    if int(num_augment) < 1:
        raise ValueError(f"num_augment: must be >= 1, got {num_augment!r}")
    augment_fn = rotate45_augmentation if augment == "rotate45" else augment
    if algorithm == "imitation":  # its metrics: POMO's at validation / test, the loss in training
        return Imitation(
            env, policy=policy, num_augment=int(num_augment), augment_fn=augment_fn, **kwargs
        )
    val_metrics = ["reward", "max_reward"] + (["max_aug_reward"] if num_augment > 1 else [])
    kwargs.setdefault(
        "metrics", {"train": ["loss", "reward"], "val": val_metrics, "test": val_metrics}
    )
    if leader_weight is None and train_augment == 1:
        model_class = POMO
    else:
        model_class = LeaderRewardPOMO
        kwargs.update(leader_weight=1.0 if leader_weight is None else leader_weight)
        kwargs.update(train_augment=train_augment)
    return model_class(
        env, policy=policy, num_augment=int(num_augment), augment_fn=augment_fn, **kwargs
    )


def algorithm_of(model: LightningModule) -> str:
    """The :data:`ALGORITHMS` name of an RL4CO model (``POMO`` -> ``"pomo"``)."""
    for name, cls in ALGORITHMS.items():
        if isinstance(model, cls):
            return name
    raise ValueError(
        f"model: {type(model).__name__} is none of the algorithms {list(ALGORITHMS)} "
        f"({[cls.__name__ for cls in ALGORITHMS.values()]})"
    )


def monitor_metric(algorithm: str) -> str:
    """Validation metric for best-checkpoint selection: POMO's and imitation's best of the N
    starts (``val/max_reward``), REINFORCE's greedy reward (``val/reward``)."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm: unknown {algorithm!r}; choose one of {list(ALGORITHMS)}")
    return "val/reward" if algorithm == "reinforce" else "val/max_reward"


def fixed_dataset(env: CLRPEnv, size: int, seed: int, path: str | Path) -> TensorDict:
    """``size`` instances of ``env``'s generator drawn with ``seed``, saved at ``path``
    (``.npz``); an existing file is reused (checksum verified) if it holds the same size and
    seed, and refused otherwise."""
    path = Path(path)
    if path.is_file():
        with np.load(path) as data:
            saved_seed = int(data["meta_seed"]) if "meta_seed" in data.files else None
            saved_size = int(data["locs"].shape[0])
        if (saved_size, saved_seed) != (int(size), int(seed)):
            raise ValueError(
                f"{path}: holds {saved_size} instances of seed {saved_seed}, asked for {size} of "
                f"seed {seed} (val_data_size / val_seed changed in an existing run folder?)"
            )
        return load_dataset(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    td = generate_dataset(env.generator, size, seed)
    # several processes (DDP ranks) may write the same file: write privately, then rename
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.npz")
    save_dataset(td, tmp, seed=seed)
    os.replace(tmp, path)
    return td


class PolicyConfigCallback(Callback):
    """Stores the policy's class and config in every Lightning checkpoint
    (``checkpoint["clrp_policy"]``), so :func:`load_policy` can rebuild it for any algorithm."""

    def on_save_checkpoint(self, trainer, pl_module, checkpoint: dict) -> None:
        checkpoint["clrp_policy"] = policy_config(pl_module.policy)
