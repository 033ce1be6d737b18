"""CLRP embeddings for RL4CO's stock policies (``AttentionModelPolicy``, POMO, SymNCO, ...).

This module is the single source of the CLRP entries of RL4CO's embedding registries
(``rl4co/models/nn/env_embeddings/{init,context,dynamic}.py``): ``make upstream-patch`` copies
the classes below into those files. Keep it importing only torch, tensordict and rl4co, and
keep every helper a method of its class, so that each class stands alone when copied.

- init: :class:`CLRPInitEmbedding` (also DRLHQ's encoder input);
- context: :class:`CLRPContext` (current node, vehicle load, stage indicator);
- dynamic: RL4CO's ``StaticEmbedding`` (nothing changes in the keys and values).

On the released rl4co 0.7.0 (whose registries are closed dictionaries) pass them in::

    AttentionModelPolicy(env_name="clrp", **clrp_embeddings(128))
"""

from __future__ import annotations

import torch
import torch.nn as nn
from rl4co.models.nn.env_embeddings.dynamic import StaticEmbedding
from tensordict import TensorDict


class CLRPInitEmbedding(nn.Module):
    """Initial node embeddings [B, D+N, E] for the CLRP (DRLHQ's node features).

    Depot (4 numbers): x, y, normalised capacity/opening-cost ratio, capacity / total demand.
    Customer (3 numbers): x, y, demand / vehicle capacity. Coordinates are renormalised per
    instance (:meth:`normalize_coordinates`) inside the embedding, so after any augmentation.
    Two separate linear maps project depots and customers to the embedding size. Node layout
    as in ``CLRPEnv``: depots first.

    Args:
        embed_dim: embedding size ``E``.
        linear_bias: bias of the two input maps.
    """

    #: Guard for divisions by a spread that may be zero (one depot, equal ratios, one point).
    EPS = 1e-9

    def __init__(self, embed_dim: int, linear_bias: bool = True):
        super().__init__()
        self.embed_dim = embed_dim
        self.init_embed_depot = nn.Linear(4, embed_dim, bias=linear_bias)
        self.init_embed_customer = nn.Linear(3, embed_dim, bias=linear_bias)

    @staticmethod
    def normalize_coordinates(locs: torch.Tensor) -> torch.Tensor:
        """Min-max normalise coordinates [B, M, 2] per instance with one scale for both axes.

        The longer axis spans exactly [0, 1]; distances stay proportional.
        """
        low = locs.amin(dim=-2, keepdim=True)
        span = (locs.amax(dim=-2, keepdim=True) - low).amax(dim=-1, keepdim=True)
        return (locs - low) / span.clamp(min=CLRPInitEmbedding.EPS)

    @staticmethod
    def depot_features(td: TensorDict) -> torch.Tensor:
        """The two non-spatial depot features of DRLHQ, [B, D, 2].

        1. ``Q_i / O_i`` min-max normalised over the instance's depots (0.5 when all equal);
        2. ``Q_i / sum_j D_j`` (initial capacities; both in units of the vehicle capacity).
        """
        eps = CLRPInitEmbedding.EPS
        capacity = td["depot_capacity"]
        ratio = capacity / td["opening_cost"].clamp(min=eps)
        low = ratio.amin(-1, keepdim=True)
        spread = ratio.amax(-1, keepdim=True) - low
        ratio = torch.where(spread > eps, (ratio - low) / spread.clamp(min=eps), 0.5)
        q = td["vehicle_capacity"].reshape(*capacity.shape[:-1], 1)
        total = (td["demand"] / q).sum(-1, keepdim=True)
        return torch.stack([ratio, (capacity / q) / total.clamp(min=eps)], dim=-1)

    def forward(self, td: TensorDict) -> torch.Tensor:
        num_depots = td["depot_capacity"].shape[-1]
        locs = self.normalize_coordinates(td["locs"].float())
        q = td["vehicle_capacity"].reshape(*td["demand"].shape[:-1], 1)
        depots = torch.cat([locs[..., :num_depots, :], self.depot_features(td)], dim=-1)
        customers = torch.cat([locs[..., num_depots:, :], (td["demand"] / q)[..., None]], dim=-1)
        return torch.cat(
            [self.init_embed_depot(depots), self.init_embed_customer(customers)], dim=-2
        )


class CLRPContext(nn.Module):
    """Step context of the CLRP for RL4CO's attention decoder, [B, (S,) E].

    ``W [h_current, vehicle_load / vehicle_capacity, is_location_step]``: the embedding of the
    current node (a depot at location steps), the remaining vehicle load as a fraction of the
    vehicle capacity and the stage indicator (1 at location steps, 0 at routing steps).
    Accepts states of batch shape [B] or [B, S] against node embeddings [B, M, E].

    Args:
        embed_dim: embedding size ``E``.
        linear_bias: bias of ``W``.
    """

    def __init__(self, embed_dim: int, linear_bias: bool = False):
        super().__init__()
        self.embed_dim = embed_dim
        self.project_context = nn.Linear(embed_dim + 2, embed_dim, bias=linear_bias)

    def forward(self, embeddings: torch.Tensor, td: TensorDict) -> torch.Tensor:
        dims = tuple(td.batch_size)
        index = td["current_node"].reshape(dims[0], -1)  # [B, S] (S = 1 without multistart)
        current = embeddings.gather(1, index[..., None].expand(-1, -1, embeddings.shape[-1]))
        current = current.reshape(*dims, embeddings.shape[-1])
        load = (td["vehicle_load"] / td["vehicle_capacity"]).reshape(*dims, 1)
        stage = td["is_location_step"].reshape(*dims, 1)
        features = torch.cat([load, stage], dim=-1).to(current.dtype)
        return self.project_context(torch.cat([current, features], dim=-1))


def clrp_embeddings(embed_dim: int) -> dict[str, nn.Module]:
    """The CLRP ``init_embedding``, ``context_embedding`` and ``dynamic_embedding`` for an
    RL4CO policy (``AttentionModelPolicy(env_name="clrp", **clrp_embeddings(128))``)."""
    return {
        "init_embedding": CLRPInitEmbedding(embed_dim),
        "context_embedding": CLRPContext(embed_dim),
        "dynamic_embedding": StaticEmbedding(),
    }
