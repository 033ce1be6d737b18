"""The decoder's queries (context embeddings) of DRLHQ and its baselines for the CLRP: the
query each decoding step attends with, and the decoder that precomputes its static part. The
init embedding is the env's (:mod:`.env_embeddings`).

All modules accept a state TensorDict of batch shape ``[B]`` or ``[B, S]`` (RL4CO's multistart
decoder unbatchifies the state to ``[B, S]`` while the node embeddings stay ``[B, D+N, E]``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch
import torch.nn as nn
from rl4co.models.zoo.am.decoder import AttentionModelDecoder, PrecomputedCache
from rl4co.utils.ops import unbatchify
from tensordict import TensorDict
from torch import Tensor


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


def unbatchify_entries(td: TensorDict, num_starts: int, keys: Iterable[str]) -> TensorDict:
    """The entries ``keys`` of a multistart state as a state of batch shape [B, S].

    RL4CO's decoders unbatchify the whole state (``rl4co.utils.ops.unbatchify``: rows
    ``s * B + b`` become ``[b, s]``); a decoder step reads only a few of the CLRP state's ~30
    entries, and viewing all of them cost up to a tenth of a POMO training step (8% at batch 8
    on clrp50). Same views, fewer entries.

    Args:
        td: state of batch shape [S * B] (start-major rows, as RL4CO's multistart decoding).
        num_starts: ``S``.
        keys: the entries to keep.
    """
    batch = td.batch_size[0] // num_starts
    return TensorDict(
        {key: unbatchify(td.get(key), num_starts) for key in keys},
        batch_size=[batch, num_starts],
        device=td.device,
    )


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
    - first step (no route started yet, ``td["num_routes"] == 0``; also after a multistart
      start action): learned placeholders replace ``h_last`` and ``h_sub``
      (also ``h_sub`` while no route has been completed).

    The stage comes from ``td["is_location_step"]``; each state uses exactly one of the maps.
    :attr:`state_keys` lists the state entries a query reads.

    Speed: ``W_L`` and ``W_R`` are linear, so they are split by input block and applied to the
    node embeddings once per instance (:meth:`precompute`); each step then only gathers rows
    and averages the last route (:meth:`query`). The result equals ``W [inputs]`` exactly (up
    to float rounding); :meth:`location_inputs` / :meth:`routing_inputs` give the inputs.

    Args:
        embed_dim: embedding size ``E``.
        linear_bias: bias of ``W_L`` and ``W_R``.
    """

    #: The state entries :meth:`query` reads.
    state_keys = (
        "num_routes",
        "current_node",
        "last_route",
        "vehicle_load",
        "vehicle_capacity",
        "is_location_step",
    )

    def __init__(self, embed_dim: int, linear_bias: bool = False):
        super().__init__()
        self.embed_dim = embed_dim
        self.project_location = nn.Linear(2 * embed_dim, embed_dim, bias=linear_bias)
        self.project_routing = nn.Linear(2 * embed_dim + 1, embed_dim, bias=linear_bias)
        self.placeholder_last = nn.Parameter(torch.empty(embed_dim).uniform_(-1, 1))
        self.placeholder_sub = nn.Parameter(torch.empty(embed_dim).uniform_(-1, 1))

    # ------------------------------------------------------------------ explicit inputs
    def location_inputs(self, embeddings: Tensor, td: TensorDict) -> Tensor:
        """``[h_last, h_sub]`` [B, (S,) 2E]."""
        dims = _state_dims(td, embeddings)
        first = td["num_routes"].reshape(*dims, 1) == 0
        h_last = torch.where(
            first, self.placeholder_last, gather_nodes(embeddings, td["current_node"])
        )
        num_depots = embeddings.shape[1] - td["last_route"].shape[-1]
        h_sub, count = _route_mean(embeddings[:, num_depots:], td["last_route"], dims)
        h_sub = torch.where(first | (count == 0), self.placeholder_sub, h_sub)
        return torch.cat([h_last, h_sub], dim=-1)

    def routing_inputs(self, embeddings: Tensor, td: TensorDict) -> Tensor:
        """``[h_last, h_graph, load / q]`` [B, (S,) 2E + 1]."""
        dims = _state_dims(td, embeddings)
        first = td["num_routes"].reshape(*dims, 1) == 0
        h_last = torch.where(
            first, self.placeholder_last, gather_nodes(embeddings, td["current_node"])
        )
        h_graph = embeddings.mean(1)
        if len(dims) == 2:
            h_graph = h_graph[:, None].expand(-1, dims[1], -1)
        load = td["vehicle_load"] / td["vehicle_capacity"]
        return torch.cat([h_last, h_graph, load.reshape(*dims, 1).to(h_last.dtype)], dim=-1)

    # ------------------------------------------------------------------ fast path
    def precompute(self, embeddings: Tensor) -> dict[str, Tensor]:
        """Per-instance projections of the node embeddings [B, M, E] (once per decoding)."""
        e = self.embed_dim
        w_loc, w_rt = self.project_location.weight, self.project_routing.weight
        b_loc = self.project_location.bias
        b_rt = self.project_routing.bias
        graph = embeddings.mean(1) @ w_rt[:, e : 2 * e].T  # [B, E]
        if b_rt is not None:
            graph = graph + b_rt
        return {
            "last_location": embeddings @ w_loc[:, :e].T,  # [B, M, E]
            "last_routing": embeddings @ w_rt[:, :e].T,
            "sub": embeddings @ w_loc[:, e:].T,  # rows of depots unused
            "graph": graph,
            "load": w_rt[:, 2 * e],  # [E]
            "placeholder_location": self.placeholder_last @ w_loc[:, :e].T
            + self.placeholder_sub @ w_loc[:, e:].T
            + (b_loc if b_loc is not None else 0.0),
            "placeholder_sub": self.placeholder_sub @ w_loc[:, e:].T,
            "placeholder_routing": self.placeholder_last @ w_rt[:, :e].T,
            "bias_location": b_loc if b_loc is not None else torch.zeros_like(graph[0]),
        }

    def query(self, parts: dict[str, Tensor], td: TensorDict) -> Tensor:
        """The query [B, (S,) E] from :meth:`precompute`'s ``parts`` and the state ``td``."""
        dims = _state_dims(td, parts["last_location"])
        first = td["num_routes"].reshape(*dims, 1) == 0
        current = td["current_node"]
        num_depots = parts["sub"].shape[1] - td["last_route"].shape[-1]
        sub, count = _route_mean(parts["sub"][:, num_depots:], td["last_route"], dims)
        sub = torch.where(count == 0, parts["placeholder_sub"], sub)
        q_location = gather_nodes(parts["last_location"], current) + sub + parts["bias_location"]
        q_location = torch.where(first, parts["placeholder_location"], q_location)
        graph = parts["graph"] if len(dims) == 1 else parts["graph"][:, None]
        load = (td["vehicle_load"] / td["vehicle_capacity"]).reshape(*dims, 1)
        last = torch.where(
            first, parts["placeholder_routing"], gather_nodes(parts["last_routing"], current)
        )
        q_routing = last + graph + load.to(last.dtype) * parts["load"]
        location = td["is_location_step"].reshape(*dims, 1)
        return torch.where(location, q_location, q_routing)

    def forward(self, embeddings: Tensor, td: TensorDict) -> Tensor:
        return self.query(self.precompute(embeddings), td)


def _route_mean(customers: Tensor, route: Tensor, dims: tuple) -> tuple[Tensor, Tensor]:
    """Mean of ``customers`` [B, N, E] over ``route`` [B, (S,) N] (bool) and the counts."""
    weights = route.to(customers.dtype)
    count = weights.sum(-1, keepdim=True)
    if len(dims) == 1:
        total = torch.bmm(weights[:, None], customers).squeeze(1)
    else:
        total = torch.bmm(weights, customers)
    return total / count.clamp(min=1.0), count


class LastNodeLoadContext(nn.Module):
    """Single query ``W [h_last, vehicle_load / vehicle_capacity]`` [B, (S,) E] (POMO*, MTA*).

    A learned placeholder replaces ``h_last`` at the first step (no node has been visited).
    Like :class:`HeterogeneousQueryContext`, ``W`` is applied to the node embeddings once per
    instance (:meth:`precompute`) and each step gathers (:meth:`query`).
    """

    #: The state entries :meth:`query` reads.
    state_keys = ("num_routes", "current_node", "vehicle_load", "vehicle_capacity")

    def __init__(self, embed_dim: int, linear_bias: bool = False):
        super().__init__()
        self.embed_dim = embed_dim
        self.project_context = nn.Linear(embed_dim + 1, embed_dim, bias=linear_bias)
        self.placeholder_last = nn.Parameter(torch.empty(embed_dim).uniform_(-1, 1))

    def precompute(self, embeddings: Tensor) -> dict[str, Tensor]:
        e = self.embed_dim
        w, b = self.project_context.weight, self.project_context.bias
        bias = b if b is not None else torch.zeros(e, device=w.device, dtype=w.dtype)
        return {
            "last": embeddings @ w[:, :e].T,
            "placeholder": self.placeholder_last @ w[:, :e].T,
            "load": w[:, e],
            "bias": bias,
        }

    def query(self, parts: dict[str, Tensor], td: TensorDict) -> Tensor:
        dims = _state_dims(td, parts["last"])
        first = td["num_routes"].reshape(*dims, 1) == 0
        last = torch.where(
            first, parts["placeholder"], gather_nodes(parts["last"], td["current_node"])
        )
        load = (td["vehicle_load"] / td["vehicle_capacity"]).reshape(*dims, 1).to(last.dtype)
        return last + load * parts["load"] + parts["bias"]

    def forward(self, embeddings: Tensor, td: TensorDict) -> Tensor:
        return self.query(self.precompute(embeddings), td)


class PrecomputedQueryDecoder(AttentionModelDecoder):
    """RL4CO's ``AttentionModelDecoder`` whose query comes from a context module with
    ``precompute(embeddings)`` / ``query(parts, td)``: the per-instance part of the query is
    computed once with the keys and values, the per-step part by gathers.

    Two shortcuts give RL4CO's logits with less work per step: with several starts only the
    entries the query and the mask read are unbatchified (:func:`unbatchify_entries`), and a
    static dynamic embedding (RL4CO's ``StaticEmbedding``, zeros) is not added to the keys and
    values.
    """

    def forward(
        self, td: TensorDict, cached: PrecomputedCache, num_starts: int = 0
    ) -> tuple[Tensor, Tensor]:
        """Logits [B (x S), D+N] of the next action and the action mask, as RL4CO's."""
        if num_starts <= 1 or self.is_dynamic_embedding:
            return super().forward(td, cached, num_starts)
        keys = (*self.context_embedding.state_keys, "action_mask")
        state = unbatchify_entries(td, num_starts, keys)  # [B, S]
        glimpse_q = self._compute_q(cached, state)
        glimpse_k, glimpse_v, logit_k = self._compute_kvl(cached, state)
        logits = self.pointer(glimpse_q, glimpse_k, glimpse_v, logit_k, state["action_mask"])
        # [B, S, D+N] -> rows s * B + b, the order of td (RL4CO rearranges "b s l -> (s b) l")
        return logits.transpose(0, 1).reshape(-1, logits.shape[-1]), td["action_mask"]

    def _compute_kvl(self, cached: PrecomputedCache, td: TensorDict):
        if self.is_dynamic_embedding:
            return super()._compute_kvl(cached, td)
        return cached.glimpse_key, cached.glimpse_val, cached.logit_key

    def _precompute_cache(self, embeddings: Tensor, num_starts: int = 0) -> PrecomputedCache:
        cache = super()._precompute_cache(embeddings, num_starts=num_starts)
        return QueryCache(*cache.fields, query_parts=self.context_embedding.precompute(embeddings))

    def _compute_q(self, cached: QueryCache, td: TensorDict) -> Tensor:
        query = self.context_embedding.query(cached.query_parts, td)
        if isinstance(cached.graph_context, Tensor):
            graph = cached.graph_context
            query = query + (graph.unsqueeze(1) if td.dim() == 2 else graph)
        return query.unsqueeze(1) if query.ndim == 2 else query


@dataclass
class QueryCache(PrecomputedCache):
    """``PrecomputedCache`` plus the context module's per-instance projections."""

    query_parts: dict | None = None
