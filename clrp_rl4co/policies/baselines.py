"""Baselines on the same env, starts and training: POMO* and MTA*."""

from __future__ import annotations

import math

import torch
import torch.nn as nn
from rl4co.models.common.constructive.autoregressive import (
    AutoregressiveDecoder,
    AutoregressiveEncoder,
    AutoregressivePolicy,
)
from rl4co.models.nn.graph.attnnet import GraphAttentionNetwork
from tensordict import TensorDict
from torch import Tensor

from .attention import CLRPAttentionPolicy
from .base import CLRPPolicyMixin, split_architecture
from .env_embeddings import CLRPInitEmbedding
from .pretrained import PretrainedMixin
from .queries import LastNodeLoadContext, unbatchify_entries


class POMOStarPolicy(CLRPAttentionPolicy):
    """POMO*: RL4CO's attention model with the CLRP init embedding and a single query
    ``W [h_last, vehicle_load / vehicle_capacity]`` (no query switching, no graph context).

    Everything else (encoder, decoder, start scheme, arguments) is the shared
    :class:`~.attention.CLRPAttentionPolicy`, as for :class:`~.drlhq.DRLHQPolicy`.
    """

    registry_name = "pomo"
    context_class = LastNodeLoadContext


class MTAEncoder(AutoregressiveEncoder):
    """MTA* encoder: one init embedding, three streams of ``num_layers`` attention layers.

    Streams: self-attention over all nodes, over depots only, over customers only; each stream
    chains its own layers from the initial embeddings.

    Returns ``(hidden, init_h)`` with ``hidden = (h_all [B, D+N, E], h_depots [B, D, E],
    h_customers [B, N, E])``.
    """

    def __init__(
        self,
        embed_dim: int = 128,
        num_heads: int = 8,
        num_layers: int = 3,
        normalization: str = "instance",
        feedforward_hidden: int = 512,
    ):
        super().__init__()
        self.init_embedding = CLRPInitEmbedding(embed_dim)

        def stream() -> GraphAttentionNetwork:
            return GraphAttentionNetwork(
                num_heads, embed_dim, num_layers, normalization, feedforward_hidden
            )

        self.net_all, self.net_depots, self.net_customers = stream(), stream(), stream()

    def forward(self, td: TensorDict) -> tuple[tuple[Tensor, Tensor, Tensor], Tensor]:
        init_h = self.init_embedding(td)
        num_depots = td["depot_capacity"].shape[-1]
        h_all = self.net_all(init_h)
        h_depots = self.net_depots(init_h[:, :num_depots])
        h_customers = self.net_customers(init_h[:, num_depots:])
        return (h_all, h_depots, h_customers), init_h


class MTADecoder(AutoregressiveDecoder):
    """MTA* decoder: query ``W_q [h_last, load / q]``; three multi-head attentions with separate
    key/value projections (all nodes with the action mask; depots; customers), summed, one
    output projection, then a single-head pointer over the all-node embeddings (the decoding
    strategy clips with tanh).

    ``stream_scale`` (3 ones) multiplies the three attention outputs; it is a buffer for
    ablations (zeroing one stream) and tests.
    """

    def __init__(self, embed_dim: int = 128, num_heads: int = 8, linear_bias: bool = False):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.context_embedding = LastNodeLoadContext(embed_dim)
        self.project_all = nn.Linear(embed_dim, 3 * embed_dim, bias=linear_bias)  # k, v, logit k
        self.project_depots = nn.Linear(embed_dim, 2 * embed_dim, bias=linear_bias)
        self.project_customers = nn.Linear(embed_dim, 2 * embed_dim, bias=linear_bias)
        self.project_out = nn.Linear(embed_dim, embed_dim, bias=False)
        self.register_buffer("stream_scale", torch.ones(3), persistent=False)

    def pre_decoder_hook(self, td, env, hidden, num_starts: int = 0):
        h_all, h_depots, h_customers = hidden
        key_all, value_all, logit_key = self.project_all(h_all).chunk(3, dim=-1)
        key_dep, value_dep = self.project_depots(h_depots).chunk(2, dim=-1)
        key_cus, value_cus = self.project_customers(h_customers).chunk(2, dim=-1)
        cache = {
            "query_parts": self.context_embedding.precompute(h_all),
            "all": (key_all, value_all),
            "depots": (key_dep, value_dep),
            "customers": (key_cus, value_cus),
            "logit_key": logit_key,
        }
        return td, env, cache

    def _heads(self, x: Tensor) -> Tensor:
        """[B, M, E] -> [B, H, M, E/H]."""
        b, m, _ = x.shape
        return x.view(b, m, self.num_heads, -1).transpose(1, 2)

    def _attend(self, q: Tensor, kv: tuple[Tensor, Tensor], mask: Tensor | None) -> Tensor:
        """q [B, H, S, d]; kv [B, M, E]; mask [B, S, M] or None -> [B, H, S, d]."""
        key, value = self._heads(kv[0]), self._heads(kv[1])
        scores = q @ key.transpose(-2, -1) / math.sqrt(q.shape[-1])  # [B, H, S, M]
        if mask is not None:
            scores = scores.masked_fill(~mask[:, None], float("-inf"))
        return torch.softmax(scores, dim=-1) @ value

    def forward(self, td: TensorDict, cache: dict, num_starts: int = 0) -> tuple[Tensor, Tensor]:
        if num_starts > 1:  # [B, S]
            keys = (*self.context_embedding.state_keys, "action_mask")
            td = unbatchify_entries(td, num_starts, keys)
        mask = td["action_mask"]
        if mask.dim() == 2:
            mask = mask[:, None]  # [B, 1, M]
        query = self.context_embedding.query(cache["query_parts"], td)
        if query.dim() == 2:
            query = query[:, None]  # [B, S, E]
        b, s, e = query.shape
        q = query.view(b, s, self.num_heads, -1).transpose(1, 2)  # [B, H, S, d]
        scale = self.stream_scale
        heads = (
            scale[0] * self._attend(q, cache["all"], mask)
            + scale[1] * self._attend(q, cache["depots"], None)
            + scale[2] * self._attend(q, cache["customers"], None)
        )
        glimpse = self.project_out(heads.transpose(1, 2).reshape(b, s, e))  # [B, S, E]
        logits = glimpse @ cache["logit_key"].transpose(-2, -1) / math.sqrt(e)  # [B, S, M]
        logits = logits.transpose(0, 1).reshape(b * s, -1)  # start-major (s b)
        mask = mask.transpose(0, 1).reshape(b * s, -1)
        return logits, mask


class MTAPolicy(CLRPPolicyMixin, PretrainedMixin, AutoregressivePolicy):
    """MTA* (Li et al. 2024, multi-type attention for the multi-depot VRP) on the CLRP.

    Args: the architecture arguments of :data:`.base.ARCHITECTURE`, as for
    :class:`clrp_rl4co.policies.DRLHQPolicy` (``num_encoder_layers`` per stream); other keyword
    arguments (``env_name``, decode types, ...) go to RL4CO's ``AutoregressivePolicy``.
    """

    registry_name = "mta"

    def __init__(self, env_name: str = "clrp", **kwargs):
        config, rest = split_architecture(kwargs)
        embed_dim, num_heads = config["embed_dim"], config["num_heads"]
        super().__init__(
            encoder=MTAEncoder(
                embed_dim,
                num_heads,
                config["num_encoder_layers"],
                config["normalization"],
                config["feedforward_hidden"],
            ),
            decoder=MTADecoder(embed_dim, num_heads),
            env_name=env_name,
            tanh_clipping=config["tanh_clipping"],
            **rest,
        )
        self.config = config
