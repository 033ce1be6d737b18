"""RL4CO models (POMO, AttentionModel) for the CLRP policies, and training helpers.

Policies themselves are built and loaded by :mod:`clrp_rl4co.policies` (``build_policy``,
``load_policy``), re-exported by :mod:`clrp_rl4co.models`."""

from __future__ import annotations

import os
from pathlib import Path

import torch
from lightning.pytorch.callbacks import Callback
from rl4co.models import POMO, AttentionModel
from tensordict import TensorDict

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp.generator import generate_dataset, load_dataset, save_dataset
from clrp_rl4co.policies import policy_config, rotate45_augmentation

#: RL4CO algorithms: ``pomo`` (shared baseline over the N starts) and ``reinforce``
#: (``AttentionModel``: REINFORCE with a greedy rollout baseline).
ALGORITHMS = ("pomo", "reinforce")


def paper_lr_schedule(epochs: int, decay_at: float = 0.7, gamma: float = 0.1) -> dict:
    """RL4CO ``lr_scheduler`` arguments for the paper's schedule: x ``gamma`` after
    ``decay_at`` of the epochs (epoch 701 of 1000)."""
    milestone = max(1, int(round(decay_at * epochs)))
    return {
        "lr_scheduler": "MultiStepLR",
        "lr_scheduler_kwargs": {"milestones": [milestone], "gamma": gamma},
    }


def build_model(
    env: CLRPEnv,
    policy: torch.nn.Module,
    algorithm: str = "pomo",
    num_augment: int = 8,
    augment: str = "dihedral8",
    **kwargs,
):
    """An RL4CO LightningModule: ``POMO`` (default) or ``AttentionModel`` (REINFORCE, rollout
    baseline). ``augment`` picks the x``num_augment`` augmentation POMO uses at validation /
    test: ``"dihedral8"`` (RL4CO) or ``"rotate45"`` (the paper's). ``kwargs`` go to the model
    (batch sizes, data sizes, optimizer, lr scheduler, ...).

    POMO logs ``val/max_reward`` (best of the N starts, the model's multistart objective) next
    to ``val/reward`` (mean over starts); select checkpoints on the former."""
    if algorithm == "pomo":
        val_metrics = ["reward", "max_reward"] + (["max_aug_reward"] if num_augment > 1 else [])
        kwargs.setdefault(
            "metrics", {"train": ["loss", "reward"], "val": val_metrics, "test": val_metrics}
        )
        augment_fn = rotate45_augmentation if augment == "rotate45" else augment
        return POMO(env, policy=policy, num_augment=num_augment, augment_fn=augment_fn, **kwargs)
    if algorithm == "reinforce":
        kwargs.setdefault("baseline", "rollout")
        return AttentionModel(env, policy=policy, **kwargs)
    raise ValueError(f"algorithm: unknown {algorithm!r}; choose one of {ALGORITHMS}")


def monitor_metric(algorithm: str) -> str:
    """Validation metric for best-checkpoint selection."""
    return "val/max_reward" if algorithm == "pomo" else "val/reward"


def fixed_dataset(env: CLRPEnv, size: int, seed: int, path: str | Path) -> TensorDict:
    """A seeded dataset saved at ``path`` (``.npz``); reused (checksum verified) if present."""
    path = Path(path)
    if path.is_file():
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
