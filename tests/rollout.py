"""Test helper: uniformly random feasible rollouts through the env."""

from __future__ import annotations

import numpy as np
import torch
from oracle import oracle_cost


def random_rollout(env, td, seed: int = 0, max_steps: int = 100_000):
    """Roll out a uniformly random feasible policy; asserts that no mask is ever all False.

    Returns (actions [B, T], final state).
    """
    gen = torch.Generator().manual_seed(seed)
    state = env.reset(td)
    actions = []
    for _ in range(max_steps):
        mask = state["action_mask"]
        assert mask.any(-1).all(), "an action mask is all False"
        if state["done"].all():
            break
        probs = mask.float()
        action = torch.multinomial(probs, 1, generator=gen).squeeze(-1)
        state.set("action", action)
        state = env.step(state)["next"]
        actions.append(action)
    assert state["done"].all(), "rollout did not finish"
    return torch.stack(actions, dim=1), state


def oracle_costs(td, actions) -> np.ndarray:
    """[B, 3] oracle (opening, vehicles, routing) per instance of an instance TensorDict."""
    num_depots = td["depot_capacity"].shape[-1]
    out = []
    coords = td["cost_locs"].double().numpy()
    rounded = td["rounded_costs"].numpy() if "rounded_costs" in td.keys() else None
    for b in range(td.batch_size[0]):
        out.append(
            oracle_cost(
                coords[b],
                td["depot_capacity"][b].double().numpy(),
                td["opening_cost"][b].double().numpy(),
                td["demand"][b].double().numpy(),
                float(td["vehicle_capacity"][b]),
                float(td["vehicle_fixed_cost"][b]),
                actions[b].tolist(),
                rounded=bool(rounded[b]) if rounded is not None else False,
            )
        )
    assert num_depots >= 1
    return np.array(out)
