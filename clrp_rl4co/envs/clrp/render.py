"""Matplotlib picture of a CLRP instance and (optionally) a solution with its cost parts:
:func:`render` draws onto axes, :func:`plot_solution` writes a PNG file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch
from tensordict import TensorDict

from .costs import cost_parts
from .validity import routes_from_actions


def plotted_solution(
    td: TensorDict, actions: torch.Tensor | None, index: int = 0
) -> tuple[TensorDict, torch.Tensor | None]:
    """The instance :func:`render` draws, as a batch of one on the CPU (instance ``index`` of
    ``td``; ``td`` itself when it has no batch dimension), and its action row ([T], or None
    without ``actions``; ``actions`` is [B, T] or [T])."""
    td = td.detach().cpu()
    if td.batch_size == torch.Size([]):
        td = td.unsqueeze(0)
        index = 0
    row = None
    if actions is not None:
        actions = torch.as_tensor(actions).cpu()
        row = actions if actions.dim() == 1 else actions[index]
    return td[index : index + 1], row


def finished_cost_parts(state: TensorDict) -> dict[str, torch.Tensor] | None:
    """:func:`~.costs.cost_parts` of a finished env state; None for anything else (an
    instance, a reset or unfinished state)."""
    keys = state.keys()
    if "done" not in keys or "cost_opening" not in keys or not bool(state["done"].all()):
        return None
    return cost_parts(state)


def render(
    td: TensorDict,
    actions: torch.Tensor | None = None,
    ax=None,
    index: int = 0,
    title: str | None = None,
    costs: Mapping[str, float | torch.Tensor] | None = None,
):
    """Draw instance ``index`` of ``td`` in its own coordinates (``cost_locs``).

    Open depots are filled squares, unused ones hollow; depot marker size grows with capacity,
    customer marker size with demand; each route is coloured by its depot. With ``actions``
    ([B, T] or [T]) the title shows the solution's cost parts: ``costs`` (``total``,
    ``opening``, ``vehicles``, ``routing``: numbers, one-element tensors, or tensors with one
    entry per instance of ``td``), by default read from ``td`` when it is the finished state
    the actions led to (:func:`finished_cost_parts`); without either it shows the routes
    only (``CLRPEnv.render`` prices the actions by replaying them). Returns the axes.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 6))
    one, row = plotted_solution(td, actions, index)
    num_depots = one["depot_capacity"].shape[-1]
    locs = one.get("cost_locs", one["locs"])[0].double().numpy()
    routes = [] if row is None else routes_from_actions(row.tolist(), num_depots)
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
            if costs is None:
                costs = finished_cost_parts(one)
            summary = f"{len(open_depots)} open depots, {len(routes)} routes"
            if costs is None:
                title = f"{title}\n{summary}"
            else:
                c = {k: _instance_value(costs[k], index) for k in _TITLE_PARTS}
                # in full (10 significant digits, as the CLI's plot_title): a Prins cost
                # reads 90111, not 9.011e+04
                title = (
                    f"cost {c['total']:.10g} = depots {c['opening']:.10g} + vehicles "
                    f"{c['vehicles']:.10g} + routing {c['routing']:.10g}\n{summary}"
                )
    ax.set_title(title, fontsize=9)
    ax.set_aspect("equal")
    return ax


def plot_solution(
    td: TensorDict,
    actions: torch.Tensor,
    path: str | Path,
    title: str | None = None,
    index: int = 0,
    costs: Mapping[str, float | torch.Tensor] | None = None,
) -> Path:
    """Write a PNG of instance ``index`` of ``td`` with its solution ``actions``
    (:func:`render`), titled with the solution's cost parts under ``title`` (a first line).

    The figure is made outside pyplot: the caller's backend is not changed and no figure stays
    registered with pyplot.

    Args:
        td: the instances, batch ``[B]`` (or one unbatched instance); the cost parts are read
            from it when it is the finished state the actions led to (e.g.
            ``CLRPEnv.rollout_actions``), else from ``costs``, else the title shows the
            number of open depots and routes only.
        actions: env node indices ``[B, T]`` (or ``[T]``), depots ``0..D-1``, customers
            ``D+j``.
        path: the PNG file (parent folders are created).
        title: a line above the cost parts (e.g. the instance's and the method's names).
        index: which instance of the batch.
        costs: ``total``, ``opening``, ``vehicles``, ``routing`` (instance units), as
            :func:`render` takes them.

    Returns:
        ``path``.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 6.0))
    ax = fig.subplots()
    render(td, actions, ax=ax, index=index, costs=costs)
    if title:
        ax.set_title(f"{title}\n{ax.get_title()}", fontsize=9)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    return path


#: Cost parts the title shows.
_TITLE_PARTS = ("total", "opening", "vehicles", "routing")


def _instance_value(value: float | torch.Tensor, index: int) -> float:
    """The drawn instance's entry of a cost part: the number itself, the only entry, or entry
    ``index`` of one value per instance."""
    flat = torch.as_tensor(value, dtype=torch.float64).reshape(-1)  # a Python float in full
    return float(flat[0] if flat.numel() == 1 else flat[index])
