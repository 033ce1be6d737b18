"""A constructive nearest-neighbour baseline that runs through the env (no learning).

Location step: among feasible depots pick the one minimising (opening cost if not yet used) +
distance to its nearest unserved customer. Routing step: go to the nearest feasible node (a
customer, or the departure depot when it is the only choice or the nearest).
"""

from __future__ import annotations

import torch
from tensordict import TensorDict


def nearest_neighbor_rollout(env, td: TensorDict) -> tuple[torch.Tensor, TensorDict]:
    """Roll out the heuristic on an instance batch; returns (actions [B, T], final state)."""
    with torch.no_grad():  # a block, not a decorator: mutation testing reaches it
        state = env.reset(td)
        num_depots = state["depot_capacity"].shape[-1]
        locs = state["cost_locs"]
        dist = torch.cdist(locs, locs)  # [B, D+N, D+N], instance units
        actions = []
        while not bool(state["done"].all()):
            mask = state["action_mask"]
            current = state["current_node"]
            rows = current[..., None].expand(-1, 1, dist.shape[-1])
            from_current = dist.gather(1, rows).squeeze(1)
            unserved = ~state["served"]
            to_customer = dist[:, :num_depots, num_depots:].masked_fill(
                ~unserved[:, None, :], torch.inf
            )
            opening = state["opening_cost"].double() * ~state["depot_used"]
            depot_score = opening + to_customer.amin(-1)
            score = torch.cat([depot_score, from_current[:, num_depots:]], dim=-1)
            routing = ~state["is_location_step"]
            score = torch.where(routing, from_current, score)
            # finite scores on feasible actions (a finished row's only action is the padding one)
            score = score.nan_to_num(posinf=1e300).masked_fill(~mask, torch.inf)
            action = score.argmin(-1)
            state.set("action", action)
            state = env.step(state)["next"]
            actions.append(action)
        return torch.stack(actions, dim=1), state
