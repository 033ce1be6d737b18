"""The CLRP's rounded arc-cost convention, in torch and its numpy twin side by side.

An instance with ``rounded_costs`` set (Prodhon's cost-type flag 0) prices an arc of Euclidean
length ``d`` at the integer ``ceil(100 d)``; otherwise at ``d`` itself. :func:`round_cost` is
the rule (the env's step and its dead-end penalty use it), :func:`round_cost_np` the same rule
on numpy arrays (for code that prices solutions outside torch); a test holds the two equal.
"""

from __future__ import annotations

import numpy as np
import torch

#: Subtracted before rounding up, so that a distance that is an exact multiple of 0.01 in real
#: arithmetic is not pushed to the next integer by float64 round-off in ``100 d``.
ROUNDING_SLACK = 1e-9


def round_cost(distance: torch.Tensor) -> torch.Tensor:
    """``ceil(100 d)`` of Euclidean lengths ``d`` (any shape; use float64 for exact costs)."""
    return torch.ceil(100.0 * distance - ROUNDING_SLACK)


def round_cost_np(distance) -> np.ndarray:
    """:func:`round_cost` on numpy (the input is read as float64)."""
    return np.ceil(100.0 * np.asarray(distance, dtype=np.float64) - ROUNDING_SLACK)
