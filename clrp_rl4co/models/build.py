"""Build DRLHQ / POMO* / MTA* policies and RL4CO models (POMO, AttentionModel) for the CLRP."""

from __future__ import annotations

import os
from pathlib import Path

import torch
from lightning.pytorch.callbacks import Callback
from rl4co.models import POMO, AttentionModel
from tensordict import TensorDict

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp.generator import generate_dataset, load_dataset, save_dataset
from clrp_rl4co.policies import POLICIES, rotate45_augmentation
from clrp_rl4co.policies.pretrained import drop_legacy_keys

_POLICY_CLASSES = {cls.__name__: cls for cls in POLICIES.values()}

#: RL4CO algorithms: ``pomo`` (shared baseline over the N starts) and ``reinforce``
#: (``AttentionModel``: REINFORCE with a greedy rollout baseline).
ALGORITHMS = ("pomo", "reinforce")


def build_policy(model: str = "drlhq", **config) -> torch.nn.Module:
    """A fresh policy: ``model`` in ``drlhq`` / ``pomo`` / ``mta``; ``config`` are its
    constructor arguments (``embed_dim``, ``num_encoder_layers``, ``num_heads``,
    ``feedforward_hidden``, ...)."""
    if model not in POLICIES:
        raise ValueError(f"model: unknown {model!r}; choose one of {list(POLICIES)}")
    return POLICIES[model](**config)


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
        policy = pl_module.policy
        checkpoint["clrp_policy"] = {
            "class": type(policy).__name__,
            "config": dict(getattr(policy, "config", {})),
        }


def load_policy(path: str | Path, map_location: str = "cpu") -> torch.nn.Module:
    """A policy from a Lightning checkpoint (``.ckpt``) or a shipped / saved pretrained model.

    Lightning checkpoints of ``POMO`` / ``AttentionModel`` pickle the policy in their
    hyper-parameters, so they are read with ``weights_only=False``: load only files you trust.
    Pretrained models (``.pt`` + ``.json``) are read with ``weights_only=True``.
    """
    path = Path(path)
    if path.suffix == ".ckpt":
        ckpt = torch.load(path, map_location=map_location, weights_only=False)
        meta = ckpt.get("clrp_policy")
        if meta is not None:
            policy = _POLICY_CLASSES[meta["class"]](**meta["config"])
        else:
            policy = ckpt.get("hyper_parameters", {}).get("policy")
            if not isinstance(policy, torch.nn.Module):
                raise ValueError(f"{path}: no policy config in the checkpoint")
        state = {
            k[len("policy.") :]: v for k, v in ckpt["state_dict"].items() if k.startswith("policy.")
        }
        policy.load_state_dict(drop_legacy_keys(policy, state))
        return policy.to(map_location)
    import json

    from clrp_rl4co.policies.pretrained import _resolve

    try:
        _, meta_path = _resolve(path)  # a shipped name or a saved path
    except FileNotFoundError:
        meta_path = path.with_suffix(".json")
    name = json.loads(meta_path.read_text())["class"] if meta_path.is_file() else "DRLHQPolicy"
    return _POLICY_CLASSES[name].from_pretrained(path, map_location=map_location)
