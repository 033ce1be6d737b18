"""The campaign's validation: the tables' x8 objective on the track's fixed set."""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDict

from ..training.precision import autocast_for
from .settings import VAL_DECODE, VAL_ROWS


def val_batch_size(preset: str) -> int:
    """Validation instances per batch: :data:`VAL_ROWS` rows of 8 augmentations x N starts."""
    from clrp_rl4co.envs.clrp import CLRPGenerator

    return max(1, VAL_ROWS // (8 * CLRPGenerator(preset=preset).num_loc))


@torch.no_grad()
def validate(
    policy: torch.nn.Module,
    env: Any,
    instances: TensorDict,
    batch_size: int,
    precision: str = "32-true",
) -> float:
    """Mean objective (cost, float64 from the env's ``cost_parts``) of ``policy`` on
    ``instances`` ``[B]`` under :data:`VAL_DECODE`, ``batch_size`` instances at a time, on the
    policy's device and under the autocast of ``precision``. The policy's train / eval mode is
    restored."""
    from clrp_rl4co.models import decode_batch

    device = next(policy.parameters()).device
    was_training = policy.training
    policy.eval()
    total, count = 0.0, 0
    try:
        with autocast_for(precision, device):
            for start in range(0, instances.batch_size[0], batch_size):
                chunk = instances[start : start + batch_size].to(device)
                _, parts, _ = decode_batch(policy, env, chunk, VAL_DECODE)
                total += float(parts["total"].double().sum())
                count += chunk.batch_size[0]
    finally:
        policy.train(was_training)
    return total / count
