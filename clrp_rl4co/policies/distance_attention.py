"""A size-aware distance bias for the attention of the CLRP policies (DRLHQ-CF's
``distance_bias=True``).

Attention logits between nodes ``i`` and ``j`` get ``- alpha * log2(N) * d(i, j)`` added, with

- ``d(i, j)`` the Euclidean distance between the nodes in the coordinates the init embedding
  sees: ``td["locs"]`` min-max normalised per instance with one scale for both axes
  (:meth:`~.env_embeddings.CLRPInitEmbedding.normalize_coordinates`, which
  :class:`~.cost_features.CostFeatureInitEmbedding` uses too), so the longer side of the
  bounding box is 1 and ``d`` lies in ``[0, sqrt 2]``; computed after any augmentation, like
  the embedding's own coordinates;
- ``N`` the number of **customers** (``td["demand"].shape[-1]``, the size the presets name:
  ``clrp100`` has N = 100; the embedding's instance feature ``log(N) / 5`` uses the same N),
  so a 1-customer instance gets no bias;
- ``alpha`` learned scalars, all initialised at 0, so a policy with the bias and weights
  copied from one without decodes as that one does (up to float rounding of the attention
  kernel, about 1e-7).

Where it enters:

- encoder (:class:`DistanceAttentionNetwork`): every self-attention layer, one ``alpha`` per
  head and layer (``encoder.net.layers.<l>.0.module.distance_alpha``, shape ``[H]``);
- decoder (:class:`DistanceBiasDecoder`): the pointer's multi-head glimpse (one ``alpha`` per
  head, ``decoder.pointer.glimpse_alpha``) and its single-head compatibility logits (one
  ``alpha``, ``decoder.pointer.logit_alpha``), with ``i`` the node the step's query is
  anchored to: ``td["current_node"]``, which is the last node of the route at a routing step
  and, at a location step, the depot the previous route returned to (DRLHQ's ``q_L`` and
  ``q_R`` both embed ``h_last`` = the current node; :mod:`.queries`). Before the first route
  starts (``num_routes == 0``: the first step, and the steps after a multistart start
  action) the query uses learned placeholders instead of a node: no anchor, no bias there.
  The bias is added to the logits the decoder returns, i.e. *before* the decoding strategy's
  tanh clipping ``C tanh(.)`` (RL4CO's greedy, sampling, multistart, beam search and SGBS take
  the decoder's logits unchanged).

Parameter names and shapes are RL4CO's (``GraphAttentionNetwork``'s
``layers.<l>.{0.module.Wqkv, 0.module.out_proj, 1.normalizer, 2.module.lins, 3.normalizer}``,
``PointerAttention``'s ``project_out``), plus the ``alpha``s, so weights of a policy without the
bias load into one with it (``strict=False``, only the ``alpha``s missing:
:meth:`~.cost_features.DRLHQCostPolicy.with_distance_bias`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn as nn
from einops import rearrange
from rl4co.models.nn.attention import MultiHeadAttention, PointerAttention
from rl4co.models.nn.graph.attnnet import MultiHeadAttentionLayer
from rl4co.models.zoo.am.encoder import AttentionModelEncoder
from tensordict import TensorDict
from torch import Tensor

from .env_embeddings import CLRPInitEmbedding
from .queries import PrecomputedQueryDecoder, QueryCache, unbatchify_entries


def size_scale(num_customers: int) -> float:
    """``log2(N)`` for ``N`` customers (0 for one customer)."""
    return math.log2(max(int(num_customers), 1))


def scaled_distances(td: TensorDict) -> Tensor:
    """``log2(N) * d(i, j)`` [B, D+N, D+N] (float32) with ``d`` the Euclidean distance in the
    init embedding's normalised coordinates and ``N`` the number of customers."""
    locs = CLRPInitEmbedding.normalize_coordinates(td["locs"].float())
    # exact pairwise distances (the matmul form cdist uses for large sets is off by ~1e-4)
    dist = torch.cdist(locs, locs, compute_mode="donot_use_mm_for_euclid_dist")
    return dist * size_scale(td["demand"].shape[-1])


class DistanceBiasedAttention(MultiHeadAttention):
    """RL4CO's ``MultiHeadAttention`` (same ``Wqkv`` and ``out_proj``) whose attention logits
    get ``- distance_alpha[h] * distance`` in head ``h``.

    ``forward(x, distance)``: ``x`` [B, M, E]; ``distance`` [B, M, M], already scaled
    (:func:`scaled_distances`), or None (RL4CO's attention exactly).
    """

    def __init__(
        self, embed_dim: int, num_heads: int, bias: bool = True, sdpa_fn: Callable | None = None
    ):
        super().__init__(embed_dim, num_heads, bias=bias, sdpa_fn=sdpa_fn)
        self.distance_alpha = nn.Parameter(torch.zeros(num_heads))

    def distance_bias(self, distance: Tensor) -> Tensor:
        """The additive attention bias [B, H, M, M] of ``distance`` [B, M, M]."""
        return -self.distance_alpha[:, None, None] * distance[:, None]

    def _heads(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Queries, keys and values [B, H, M, E/H] (RL4CO's split of ``Wqkv``)."""
        return rearrange(
            self.Wqkv(x), "b s (three h d) -> three b h s d", three=3, h=self.num_heads
        ).unbind(dim=0)

    def attention_logits(self, x: Tensor, distance: Tensor | None = None) -> Tensor:
        """The attention logits [B, H, M, M] that :meth:`forward` softmaxes (explicitly:
        ``q k^T / sqrt(E/H) - alpha_h distance``); for inspection and tests."""
        q, k, _ = self._heads(x)
        logits = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        return logits if distance is None else logits + self.distance_bias(distance)

    def forward(self, x: Tensor, distance: Tensor | None = None) -> Tensor:
        if distance is None:
            return super().forward(x)
        q, k, v = self._heads(x)
        bias = self.distance_bias(distance).to(q.dtype)
        out = self.sdpa_fn(q, k, v, attn_mask=bias, dropout_p=self.attention_dropout)
        return self.out_proj(rearrange(out, "b h s d -> b s (h d)"))


class DistanceAttentionLayer(MultiHeadAttentionLayer):
    """RL4CO's ``MultiHeadAttentionLayer`` (attention + skip, normalisation, feed-forward +
    skip, normalisation; same submodules and parameter names) with
    :class:`DistanceBiasedAttention` as its attention."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int = 8,
        feedforward_hidden: int = 512,
        normalization: str | None = "batch",
        bias: bool = True,
        sdpa_fn: Callable | None = None,
    ):
        super().__init__(
            embed_dim,
            num_heads,
            feedforward_hidden=feedforward_hidden,
            normalization=normalization,
            bias=bias,
            sdpa_fn=sdpa_fn,
        )
        self[0].module = DistanceBiasedAttention(embed_dim, num_heads, bias=bias, sdpa_fn=sdpa_fn)

    def forward(self, x: Tensor, distance: Tensor | None = None) -> Tensor:
        attention, norm1, feedforward, norm2 = self
        h = norm1(x + attention.module(x, distance))
        return norm2(feedforward(h))


class DistanceAttentionNetwork(nn.Module):
    """RL4CO's ``GraphAttentionNetwork`` (same arguments and parameter names) built from
    :class:`DistanceAttentionLayer`; ``forward(x, distance)`` passes the scaled distances
    [B, M, M] to every layer (None: no bias)."""

    def __init__(
        self,
        num_heads: int,
        embed_dim: int,
        num_layers: int,
        normalization: str = "batch",
        feedforward_hidden: int = 512,
        sdpa_fn: Callable | None = None,
    ):
        super().__init__()
        self.layers = nn.Sequential(
            *(
                DistanceAttentionLayer(
                    embed_dim,
                    num_heads,
                    feedforward_hidden=feedforward_hidden,
                    normalization=normalization,
                    sdpa_fn=sdpa_fn,
                )
                for _ in range(num_layers)
            )
        )

    def forward(self, x: Tensor, distance: Tensor | None = None) -> Tensor:
        for layer in self.layers:
            x = layer(x, distance)
        return x


class DistanceBiasEncoder(AttentionModelEncoder):
    """RL4CO's ``AttentionModelEncoder`` (init embedding, then the attention layers) whose
    layers are a :class:`DistanceAttentionNetwork` fed with :func:`scaled_distances` of the
    input state."""

    def __init__(
        self,
        embed_dim: int,
        init_embedding: nn.Module,
        num_heads: int,
        num_layers: int,
        normalization: str,
        feedforward_hidden: int,
        env_name: str = "clrp",
        sdpa_fn: Callable | None = None,
    ):
        net = DistanceAttentionNetwork(
            num_heads, embed_dim, num_layers, normalization, feedforward_hidden, sdpa_fn
        )
        super().__init__(
            embed_dim=embed_dim, init_embedding=init_embedding, env_name=env_name, net=net
        )

    def forward(self, td: TensorDict, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        if mask is not None:
            raise ValueError("DistanceBiasEncoder: attention masks are not supported")
        init_h = self.init_embedding(td)
        return self.net(init_h, scaled_distances(td)), init_h


class DistanceBiasPointer(PointerAttention):
    """RL4CO's ``PointerAttention`` (same ``project_out``) whose glimpse attention logits get
    ``- glimpse_alpha[h] * distance`` (head ``h``) and whose compatibility logits get
    ``- logit_alpha * distance``, ``distance`` [B, (S,) M] being the scaled distances from each
    state's anchor node (zero where there is none). Without ``distance``: RL4CO's pointer."""

    def __init__(self, embed_dim: int, num_heads: int, **kwargs):
        super().__init__(embed_dim, num_heads, **kwargs)
        self.glimpse_alpha = nn.Parameter(torch.zeros(num_heads))
        self.logit_alpha = nn.Parameter(torch.zeros(()))

    def forward(self, query, key, value, logit_key, attn_mask=None, distance=None):
        if distance is None:
            return super().forward(query, key, value, logit_key, attn_mask)
        heads = self._biased_mha(query, key, value, attn_mask, distance)
        glimpse = self._project_out(heads, attn_mask)
        logits = (torch.bmm(glimpse, logit_key.squeeze(-2).transpose(-2, -1))).squeeze(
            -2
        ) / math.sqrt(glimpse.size(-1))
        logits = logits - self.logit_alpha * distance.reshape(logits.shape).to(logits.dtype)
        if self.check_nan:
            assert not torch.isnan(logits).any(), "Logits contain NaNs"
        return logits

    def _biased_mha(self, query, key, value, attn_mask, distance):
        """RL4CO's ``_inner_mha`` with the additive bias (and the mask as ``-inf``)."""
        q, k, v = self._make_heads(query), self._make_heads(key), self._make_heads(value)
        # [B, (S,) M] -> [B, 1, L, M] with L the query length (1 or S)
        distance = distance.reshape(q.shape[0], 1, -1, distance.shape[-1])
        bias = (-self.glimpse_alpha[:, None, None] * distance).to(q.dtype)  # [B, H, L, M]
        if self.mask_inner and attn_mask is not None:
            mask = attn_mask.reshape(q.shape[0], 1, -1, attn_mask.shape[-1])
            bias = bias.masked_fill(~mask, float("-inf"))
        heads = self.sdpa_fn(q, k, v, attn_mask=bias)
        return rearrange(heads, "... h n g -> ... n (h g)", h=self.num_heads)


@dataclass
class DistanceCache(QueryCache):
    """:class:`~.queries.QueryCache` plus the scaled node distances [B, M, M]."""

    node_distance: Tensor | None = None


class DistanceBiasDecoder(PrecomputedQueryDecoder):
    """:class:`~.queries.PrecomputedQueryDecoder` with a :class:`DistanceBiasPointer`: the
    scaled distances (:func:`scaled_distances`) are computed once per instance in
    :meth:`pre_decoder_hook`; each step gathers the row of its anchor node
    (``current_node``; none, i.e. zeros, while ``num_routes == 0``) and passes it to the
    pointer. Same logits layout and action mask as RL4CO's decoder, with or without
    multistart, so RL4CO's decoding strategies and SGBS use it unchanged."""

    #: State entries read for the anchor node (besides the query's and the action mask).
    anchor_keys = ("current_node", "num_routes")

    def pre_decoder_hook(self, td, env, embeddings, num_starts: int = 0):
        cache = self._precompute_cache(embeddings, num_starts=num_starts)
        batch = embeddings.shape[0]
        # a multistart / beam state is batchified start-major (rows s * B + b): rows :B are
        # the instances, in the order of the embeddings
        rows = td.batch_size[0]
        if rows % batch:
            raise ValueError(f"state batch {rows} is not a multiple of the embeddings' {batch}")
        instances = td[:batch] if rows != batch else td
        distance = scaled_distances(instances).to(embeddings.dtype)
        return td, env, DistanceCache(*cache.fields, node_distance=distance)

    @staticmethod
    def anchor_distance(distance: Tensor, td: TensorDict) -> Tensor:
        """Scaled distances [B, (S,) M] from each state's anchor node: the row of
        ``current_node`` in ``distance`` [B, M, M], zeros where ``num_routes == 0``."""
        dims = tuple(td.batch_size)
        batch, nodes = distance.shape[0], distance.shape[-1]
        index = td["current_node"].reshape(batch, -1)  # [B, S]
        rows = distance.gather(1, index[..., None].expand(-1, -1, nodes))  # [B, S, M]
        anchored = td["num_routes"].reshape(batch, -1, 1) > 0
        rows = torch.where(anchored, rows, torch.zeros((), dtype=rows.dtype, device=rows.device))
        return rows.reshape(*dims, nodes)

    def forward(self, td: TensorDict, cached: DistanceCache, num_starts: int = 0):
        """Logits [B (x S), D+N] of the next action and the action mask, as RL4CO's."""
        if self.is_dynamic_embedding:
            raise NotImplementedError("DistanceBiasDecoder: needs a static dynamic embedding")
        state = td
        if num_starts > 1:
            keys = dict.fromkeys(
                (*self.context_embedding.state_keys, *self.anchor_keys, "action_mask")
            )
            state = unbatchify_entries(td, num_starts, keys)  # [B, S]
        glimpse_q = self._compute_q(cached, state)
        glimpse_k, glimpse_v, logit_k = self._compute_kvl(cached, state)
        distance = self.anchor_distance(cached.node_distance, state)
        logits = self.pointer(
            glimpse_q, glimpse_k, glimpse_v, logit_k, state["action_mask"], distance=distance
        )
        if num_starts > 1:  # [B, S, M] -> rows s * B + b, the order of td
            logits = logits.transpose(0, 1).reshape(-1, logits.shape[-1])
        return logits, td["action_mask"]
