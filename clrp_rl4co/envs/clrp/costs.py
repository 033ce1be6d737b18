"""How a CLRP solution is priced: the rounded arc-cost convention (in torch and its numpy twin
side by side) and the objective's parts read from an env state (:func:`cost_parts`).

An instance with ``rounded_costs`` set (Prodhon's cost-type flag 0) prices an arc of Euclidean
length ``d`` at the integer ``ceil(100 d)``; otherwise at ``d`` itself. :func:`round_cost` is
the rule (the env's step and its dead-end penalty use it), :func:`round_cost_np` the same rule
on numpy arrays (for code that prices solutions outside torch); a test holds the two equal.
"""

from __future__ import annotations

import numpy as np
import torch
from tensordict import TensorDict

#: Subtracted before rounding up, so that a distance that is an exact multiple of 0.01 in real
#: arithmetic is not pushed to the next integer by float64 round-off in ``100 d``.
ROUNDING_SLACK = 1e-9


def round_cost(distance: torch.Tensor) -> torch.Tensor:
    """``ceil(100 d)`` of Euclidean lengths ``d`` (any shape; use float64 for exact costs)."""
    return torch.ceil(100.0 * distance - ROUNDING_SLACK)


def round_cost_np(distance) -> np.ndarray:
    """:func:`round_cost` on numpy (the input is read as float64)."""
    return np.ceil(100.0 * np.asarray(distance, dtype=np.float64) - ROUNDING_SLACK)


def cost_parts(state: TensorDict) -> dict[str, torch.Tensor]:
    """Objective parts of a (final) env state, float64 [B], in the instance's units.

    ``opening``, ``vehicles`` and ``routing`` are the state's ``cost_opening``,
    ``cost_vehicles`` and ``cost_routing``; ``penalty`` is the dead-end penalty (0 for
    feasible instances): ``infeasible_penalty`` per unserved customer of an ``infeasible``
    state; ``total`` sums all four.
    """
    unserved = (~state["served"]).sum(-1).double()
    penalty = torch.where(
        state["infeasible"].reshape(-1), unserved * state["infeasible_penalty"], 0.0
    )
    parts = {
        "opening": state["cost_opening"],
        "vehicles": state["cost_vehicles"],
        "routing": state["cost_routing"],
        "penalty": penalty,
    }
    parts["total"] = parts["opening"] + parts["vehicles"] + parts["routing"] + penalty
    return parts
