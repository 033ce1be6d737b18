"""The policy registry: each policy's name, class and title, and loading any saved policy.

A policy's name is its class's ``registry_name``; the Hydra model configs (``model=drlhq``), the
table commands (``python -m experiments table ... --model drlhq=PATH``), :func:`build_policy`
and the shipped models (``<name>_<preset>``, :func:`.pretrained.shipped_models`) use it; its
title labels its rows in the evaluation tables.
A saved policy (a shipped ``.json``, a Lightning checkpoint) records its class and constructor
config (:func:`.pretrained.policy_config`); :func:`load_policy` rebuilds it from them.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ..pretrained import pretrained_files, shipped_name
from .baselines import MTAPolicy, POMOStarPolicy
from .cost_features import DRLHQCostPolicy
from .drlhq import DRLHQPolicy
from .pretrained import load_checkpoint

#: Policy classes by name (each class's ``registry_name``).
POLICIES: dict[str, type[torch.nn.Module]] = {
    cls.registry_name: cls for cls in (DRLHQPolicy, POMOStarPolicy, MTAPolicy, DRLHQCostPolicy)
}

#: Display titles by name (the evaluation tables' row labels).
TITLES: dict[str, str] = {"drlhq": "DRLHQ", "pomo": "POMO*", "mta": "MTA*", "drlhqcf": "DRLHQ-CF"}


def policy_class(name: str) -> type[torch.nn.Module]:
    """The class of a policy name (``"drlhq"``) or of a class name (``"DRLHQPolicy"``, as
    saved policies record it)."""
    by_class = {cls.__name__: cls for cls in POLICIES.values()}
    cls = POLICIES.get(name) or by_class.get(name)
    if cls is None:
        raise ValueError(
            f"policy: unknown {name!r}; choose one of {list(POLICIES)} (classes {list(by_class)})"
        )
    return cls


def policy_name(policy: type | torch.nn.Module) -> str | None:
    """The name of a policy class or instance (``DRLHQPolicy`` -> ``"drlhq"``); None for a
    class that is not registered (e.g. a user's subclass)."""
    cls = policy if isinstance(policy, type) else type(policy)
    name = vars(cls).get("registry_name")
    return name if POLICIES.get(name) is cls else None


def build_policy(model: str = "drlhq", **config) -> torch.nn.Module:
    """A fresh policy: ``model`` names it (:func:`policy_class`); ``config`` are its
    constructor arguments (``embed_dim``, ``num_encoder_layers``, ``num_heads``,
    ``feedforward_hidden``, ...)."""
    return policy_class(model)(**config)


def load_policy(
    path: str | Path, map_location: str = "cpu", model: str = "drlhq"
) -> torch.nn.Module:
    """A policy from a Lightning checkpoint (``.ckpt``) or a shipped / saved pretrained model.

    Takes the names ``from_pretrained`` takes: a shipped model (``"drlhq_clrp20"``), a saved
    path (``runs/x/policy``, either file of the pair) or a bare preset (``"clrp20"``: the shipped
    model of ``model`` at that size, ``drlhq_clrp20``), and Lightning checkpoints.

    Lightning checkpoints of ``POMO`` / ``AttentionModel`` pickle the policy in their
    hyper-parameters, so they are read with ``weights_only=False``: load only files you trust.
    Pretrained models (``.pt`` + ``.json``) are read with ``weights_only=True``.

    Args:
        path: the checkpoint, saved model or shipped name.
        map_location: the device to load onto.
        model: the policy (:data:`POLICIES`) whose shipped model a bare preset names.
    """
    path = Path(shipped_name(path, policy_class(model).registry_name))
    if path.suffix == ".ckpt":
        ckpt = load_checkpoint(path, map_location=map_location, weights_only=False)
        if not isinstance(ckpt, dict) or "state_dict" not in ckpt:
            raise ValueError(f"{path}: not a Lightning checkpoint (no state_dict in it)")
        meta = ckpt.get("clrp_policy")  # models.PolicyConfigCallback's policy_config
        if meta is not None:
            policy = policy_class(meta["class"])(**meta["config"])
        else:
            policy = ckpt.get("hyper_parameters", {}).get("policy")
            if not isinstance(policy, torch.nn.Module):
                raise ValueError(f"{path}: no policy config in the checkpoint")
        state = {
            k[len("policy.") :]: v for k, v in ckpt["state_dict"].items() if k.startswith("policy.")
        }
        policy.load_state_dict(state)
        return policy.to(map_location)
    _, meta_path = pretrained_files(path)  # a shipped name or a saved path (else FileNotFoundError)
    cls = policy_class(json.loads(meta_path.read_text())["class"])
    return cls.from_pretrained(path, map_location=map_location)
