"""The DRLHQ paper's x8 augmentation: rotations by multiples of 45 degrees, renormalised."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .env_embeddings import CLRPInitEmbedding


def rotate45_augmentation(xy: Tensor, num_augment: int = 8, *args, **kwargs) -> Tensor:
    """Rotate block ``k`` of an augmented batch by ``k * 45`` degrees, then renormalise.

    ``xy`` [num_augment * B, M, 2] is the output of RL4CO's ``batchify`` (block ``k`` = rows
    ``k * B .. (k + 1) * B - 1``); block 0 is the identity (up to renormalisation). Each
    instance is then min-max normalised with one scale for both axes, which keeps distances
    proportional. Use as ``StateAugmentation(augment_fn=rotate45_augmentation)`` or
    ``POMO(..., augment_fn=rotate45_augmentation)``.
    """
    batch = xy.shape[0] // num_augment
    angle = torch.arange(num_augment, device=xy.device, dtype=xy.dtype) * (2 * math.pi / 8)
    angle = angle.repeat_interleave(batch)[:, None]  # [A * B, 1]
    x, y = xy[..., 0] - 0.5, xy[..., 1] - 0.5
    rotated = torch.stack(
        [torch.cos(angle) * x - torch.sin(angle) * y, torch.sin(angle) * x + torch.cos(angle) * y],
        dim=-1,
    )
    return CLRPInitEmbedding.normalize_coordinates(rotated)
