"""Init and context embeddings of DRLHQ and its baselines for the CLRP.

All modules accept a state TensorDict of batch shape ``[B]`` or ``[B, S]`` (RL4CO's multistart
decoder unbatchifies the state to ``[B, S]`` while the node embeddings stay ``[B, D+N, E]``).
"""

from __future__ import annotations

import torch
import torch.nn as nn
from tensordict import TensorDict
from torch import Tensor

#: Guard for divisions by a spread that may be zero (one depot, equal ratios, one point).
EPS = 1e-9


def normalize_coordinates(locs: Tensor) -> Tensor:
    """Min-max normalise coordinates per instance with one scale for both axes.

    Args:
        locs: [B, M, 2] coordinates (any units, possibly augmented).

    Returns:
        [B, M, 2] coordinates in [0, 1]^2; the longer axis spans exactly [0, 1].
    """
    low = locs.amin(dim=-2, keepdim=True)
    span = (locs.amax(dim=-2, keepdim=True) - low).amax(dim=-1, keepdim=True)
    return (locs - low) / span.clamp(min=EPS)


def depot_features(td: TensorDict) -> Tensor:
    """The two non-spatial depot features of DRLHQ, [B, D, 2].

    1. ``Q_i / O_i`` min-max normalised over the instance's depots (0.5 when all are equal);
    2. ``Q_i / sum_j D_j`` (initial capacities; both in units of the vehicle capacity).
    """
    capacity = td["depot_capacity"]
    ratio = capacity / td["opening_cost"].clamp(min=EPS)
    low = ratio.amin(-1, keepdim=True)
    spread = ratio.amax(-1, keepdim=True) - low
    ratio = torch.where(spread > EPS, (ratio - low) / spread.clamp(min=EPS), 0.5)
    q = td["vehicle_capacity"].reshape(*capacity.shape[:-1], 1)
    total = (td["demand"] / q).sum(-1, keepdim=True)
    return torch.stack([ratio, (capacity / q) / total.clamp(min=EPS)], dim=-1)


class CLRPInitEmbedding(nn.Module):
    """Initial node embeddings [B, D+N, E] from the CLRP node features.

    Depot (4 numbers): x, y, normalised capacity/opening-cost ratio, capacity / total demand.
    Customer (3 numbers): x, y, demand / vehicle capacity. Coordinates are renormalised per
    instance (:func:`normalize_coordinates`) inside the embedding, so after any augmentation.
    Two separate linear maps project depots and customers to the embedding size.

    Args:
        embed_dim: embedding size ``E``.
        linear_bias: bias of the two input maps.
    """

    def __init__(self, embed_dim: int, linear_bias: bool = True):
        super().__init__()
        self.embed_dim = embed_dim
        self.init_embed_depot = nn.Linear(4, embed_dim, bias=linear_bias)
        self.init_embed_customer = nn.Linear(3, embed_dim, bias=linear_bias)

    def forward(self, td: TensorDict) -> Tensor:
        num_depots = td["depot_capacity"].shape[-1]
        locs = normalize_coordinates(td["locs"].float())
        q = td["vehicle_capacity"].reshape(*td["demand"].shape[:-1], 1)
        depots = torch.cat([locs[..., :num_depots, :], depot_features(td)], dim=-1)
        customers = torch.cat([locs[..., num_depots:, :], (td["demand"] / q)[..., None]], dim=-1)
        return torch.cat(
            [self.init_embed_depot(depots), self.init_embed_customer(customers)], dim=-2
        )


def gather_nodes(embeddings: Tensor, index: Tensor) -> Tensor:
    """Embeddings of one node per state.

    Args:
        embeddings: [B, M, E] node embeddings.
        index: [B, 1] or [B, S, 1] node indices.

    Returns:
        [B, E] or [B, S, E].
    """
    batch = embeddings.shape[0]
    flat = index.reshape(batch, -1)  # [B, S]
    out = embeddings.gather(1, flat[..., None].expand(-1, -1, embeddings.shape[-1]))
    return out.reshape(*index.shape[:-1], embeddings.shape[-1])


def _state_dims(td: TensorDict, embeddings: Tensor) -> tuple[int, ...]:
    """Batch shape of ``td`` ([B] or [B, S]) checked against the embeddings' batch."""
    dims = tuple(td.batch_size)
    if dims[0] != embeddings.shape[0]:
        raise ValueError(
            f"state batch {dims} does not match node embeddings {tuple(embeddings.shape)}"
        )
    return dims


class HeterogeneousQueryContext(nn.Module):
    """DRLHQ's stage-dependent decoder query [B, (S,) E].

    - location step: ``q_L = W_L [h_last, h_sub]`` with ``h_sub`` the mean embedding of the
      customers of the most recently completed route (``td["last_route"]``);
    - routing step: ``q_R = W_R [h_last, h_graph, vehicle_load / vehicle_capacity]`` with
      ``h_graph`` the mean of all node embeddings;
    - first step (``td["i"] == 0``): learned placeholders replace ``h_last`` and ``h_sub``.

    The stage comes from ``td["is_location_step"]``; each state uses exactly one of the maps.

    Args:
        embed_dim: embedding size ``E``.
        linear_bias: bias of ``W_L`` and ``W_R``.
    """

    def __init__(self, embed_dim: int, linear_bias: bool = False):
        super().__init__()
        self.embed_dim = embed_dim
        self.project_location = nn.Linear(2 * embed_dim, embed_dim, bias=linear_bias)
        self.project_routing = nn.Linear(2 * embed_dim + 1, embed_dim, bias=linear_bias)
        self.placeholder_last = nn.Parameter(torch.empty(embed_dim).uniform_(-1, 1))
        self.placeholder_sub = nn.Parameter(torch.empty(embed_dim).uniform_(-1, 1))

    def location_inputs(self, embeddings: Tensor, td: TensorDict) -> Tensor:
        """``[h_last, h_sub]`` [B, (S,) 2E]."""
        dims = _state_dims(td, embeddings)
        first = td["i"].reshape(*dims, 1) == 0
        h_last = torch.where(
            first, self.placeholder_last, gather_nodes(embeddings, td["current_node"])
        )
        num_depots = embeddings.shape[1] - td["last_route"].shape[-1]
        route = td["last_route"].to(embeddings.dtype)  # [B, (S,) N]
        count = route.sum(-1, keepdim=True)
        customers = embeddings[:, num_depots:]  # [B, N, E]
        if len(dims) == 1:
            h_sub = torch.bmm(route[:, None], customers).squeeze(1)
        else:
            h_sub = torch.bmm(route, customers)
        h_sub = h_sub / count.clamp(min=1.0)
        h_sub = torch.where(first | (count == 0), self.placeholder_sub, h_sub)
        return torch.cat([h_last, h_sub], dim=-1)

    def routing_inputs(self, embeddings: Tensor, td: TensorDict) -> Tensor:
        """``[h_last, h_graph, load / q]`` [B, (S,) 2E + 1]."""
        dims = _state_dims(td, embeddings)
        first = td["i"].reshape(*dims, 1) == 0
        h_last = torch.where(
            first, self.placeholder_last, gather_nodes(embeddings, td["current_node"])
        )
        h_graph = embeddings.mean(1)
        if len(dims) == 2:
            h_graph = h_graph[:, None].expand(-1, dims[1], -1)
        load = td["vehicle_load"] / td["vehicle_capacity"]
        return torch.cat([h_last, h_graph, load.reshape(*dims, 1).to(h_last.dtype)], dim=-1)

    def forward(self, embeddings: Tensor, td: TensorDict) -> Tensor:
        dims = _state_dims(td, embeddings)
        q_location = self.project_location(self.location_inputs(embeddings, td))
        q_routing = self.project_routing(self.routing_inputs(embeddings, td))
        location = td["is_location_step"].reshape(*dims, 1)
        return torch.where(location, q_location, q_routing)


class LastNodeLoadContext(nn.Module):
    """Single query ``W [h_last, vehicle_load / vehicle_capacity]`` [B, (S,) E] (POMO*, MTA*).

    A learned placeholder replaces ``h_last`` at the first step (no node has been visited).
    """

    def __init__(self, embed_dim: int, linear_bias: bool = False):
        super().__init__()
        self.embed_dim = embed_dim
        self.project_context = nn.Linear(embed_dim + 1, embed_dim, bias=linear_bias)
        self.placeholder_last = nn.Parameter(torch.empty(embed_dim).uniform_(-1, 1))

    def forward(self, embeddings: Tensor, td: TensorDict) -> Tensor:
        dims = _state_dims(td, embeddings)
        first = td["i"].reshape(*dims, 1) == 0
        h_last = torch.where(
            first, self.placeholder_last, gather_nodes(embeddings, td["current_node"])
        )
        load = (td["vehicle_load"] / td["vehicle_capacity"]).reshape(*dims, 1).to(h_last.dtype)
        return self.project_context(torch.cat([h_last, load], dim=-1))
