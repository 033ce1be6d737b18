"""Matplotlib picture of a CLRP instance and (optionally) a solution."""

from __future__ import annotations

import numpy as np
import torch
from tensordict import TensorDict

from .validity import routes_from_actions


def render(
    td: TensorDict,
    actions: torch.Tensor | None = None,
    ax=None,
    index: int = 0,
    title: str | None = None,
):
    """Draw instance ``index`` of ``td`` in its own coordinates (``cost_locs``).

    Open depots are filled squares, unused ones hollow; depot marker size grows with capacity,
    customer marker size with demand; each route is coloured by its depot. The title shows the
    cost breakdown (replayed through :class:`CLRPEnv`) when ``actions`` ([B, T] or [T]) are
    given. Returns the axes.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 6))
    td = td.detach().cpu()
    if td.batch_size == torch.Size([]):
        td = td.unsqueeze(0)
        index = 0
    one = td[index : index + 1]
    num_depots = one["depot_capacity"].shape[-1]
    locs = one.get("cost_locs", one["locs"])[0].double().numpy()
    routes, row = [], None
    if actions is not None:
        actions = torch.as_tensor(actions).cpu()
        row = actions if actions.dim() == 1 else actions[index]
        routes = routes_from_actions(row.tolist(), num_depots)
    open_depots = {depot for depot, _ in routes}

    cmap = plt.get_cmap("tab10" if num_depots <= 10 else "tab20")
    depot_colour = {d: cmap(d % cmap.N) for d in range(num_depots)}
    cap = one["depot_capacity"][0].double().numpy()
    depot_size = 80 + 220 * (cap - cap.min()) / max(np.ptp(cap), 1e-9)
    dem = one["demand"][0].double().numpy()
    customer_size = 12 + 48 * (dem - dem.min()) / max(np.ptp(dem), 1e-9)

    for depot, customers in routes:
        xy = locs[[depot] + [num_depots + c for c in customers] + [depot]]
        ax.plot(xy[:, 0], xy[:, 1], "-", color=depot_colour[depot], lw=1.2, alpha=0.85)
    ax.scatter(
        locs[num_depots:, 0],
        locs[num_depots:, 1],
        s=customer_size,
        c="0.25",
        zorder=3,
        label="customers",
    )
    for d in range(num_depots):
        filled = d in open_depots
        ax.scatter(
            locs[d, 0],
            locs[d, 1],
            s=depot_size[d],
            marker="s",
            zorder=4,
            facecolors=depot_colour[d] if filled else "none",
            edgecolors=depot_colour[d],
            linewidths=1.8,
        )
    if title is None:
        title = f"CLRP: {num_depots} depots, {len(dem)} customers"
        if row is not None:
            from .env import CLRPEnv  # the env imports this module

            final = CLRPEnv().rollout_actions(one, row.reshape(1, -1))
            c = {k: float(v[0]) for k, v in CLRPEnv.cost_parts(final).items()}
            title = (
                f"cost {c['total']:.4g} = depots {c['opening']:.4g} + vehicles "
                f"{c['vehicles']:.4g} + routing {c['routing']:.4g}\n{len(open_depots)} open "
                f"depots, {len(routes)} routes"
            )
    ax.set_title(title, fontsize=9)
    ax.set_aspect("equal")
    return ax
