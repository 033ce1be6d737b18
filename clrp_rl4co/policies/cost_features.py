"""DRLHQ-CF: DRLHQ whose node features carry the CLRP's cost structure.

The paper's DRLHQ (:class:`~.drlhq.DRLHQPolicy`, unchanged) sees coordinates renormalised per
instance, the min-max-normalised ``Q_i / O_i`` of each depot, ``Q_i / T`` and ``d_j / q``. All
of these are unit-free, but they leave out what sets the balance of the objective (opening
costs + ``F`` x routes + route lengths): the fixed cost ``F`` is not an input at all, and the
opening costs enter only through a ratio that is min-max normalised over the depots, so
multiplying every ``O_i`` (or ``F``, or the unit of distance) by 10 leaves the policy's input,
and its solutions, exactly as they were.

:class:`CostFeatureInitEmbedding` keeps DRLHQ's features, in the same order, and appends
features that carry the cost structure, all invariant to the unit of distance and money
(scaling coordinates, ``F`` and every ``O_i`` by one factor) and to the unit of demand (scaling
demands, ``q`` and every ``Q_i`` by one factor). With ``L`` the side of the instance's bounding
square in cost units (from ``cost_locs``, the coordinates the reward uses; x100 where
``rounded_costs``: arcs cost ``ceil(100 d)``), ``T = sum_j d_j`` and ``N`` customers:

=========  ==========================================================================
depot      DRLHQ's 4 (``x, y``, ``Q_i / O_i`` normalised with a floor on its spread,
           ``Q_i / T``), then ``log1p(O_i / L)``, ``log1p(Q_i / q)``, ``min(Q_i / T, 1)``
customer   DRLHQ's 3 (``x, y``, ``d_j / q``), then ``d_j / mean_k d_k``
both       instance features appended to every node: ``log1p(F / L)``,
           ``log1p(mean_i O_i / L)``, ``log1p(sum_i Q_i / T)``, ``log(N) / 5``
=========  ==========================================================================

DRLHQ min-max normalises ``r_i = Q_i / O_i`` over the depots, ``(r_i - min r) / (max r -
min r)``, and uses 0.5 when all ratios are equal. That input is discontinuous: on identical
depots (all ``Q_i`` and all ``O_i`` equal, as in Tuzun-Burke-like classes) it is 0.5 for every
depot, a state the paper's training never shows, and the shipped models then run about three
times as many routes as needed; multiplying each ``O_i`` by ``1 +- 1 %`` spreads the feature
over ``[0, 1]`` again and cuts the cost 2.3x (``results/ood/diagnosis.md``). The variant uses
``0.5 + (r_i - (max r + min r) / 2) / max(max r - min r, RATIO_FLOOR x mean r)``: the same as
DRLHQ's whenever the ratios spread over at least ``RATIO_FLOOR`` of their mean (every
instance of the paper's distribution but rare draws), 0.5 for identical depots, and
continuous in between.

``log1p`` keeps ratios that span orders of magnitude (``O_i / L`` is about 10 in the paper's
``clrp100`` and 1 in a Tuzun-Burke-like instance) in a range a linear map handles;
``min(Q_i / T, 1)`` is 1 exactly when depot ``i`` alone can serve every customer.

:class:`DRLHQCostPolicy` is DRLHQ with this init embedding (same encoder, heterogeneous query
decoder and decoding). Its first input columns are DRLHQ's, so
:meth:`DRLHQCostPolicy.from_drlhq` starts it from a trained DRLHQ model with the new columns
at zero: it then decodes exactly as that model does on every instance whose ratios spread over
at least ``RATIO_FLOOR`` of their mean (and continuously on the others), and fine-tuning
learns to use the new features.

``DRLHQCostPolicy(distance_bias=True)`` adds a size-aware distance bias,
``- alpha log2(N) d(i, j)``, to the encoder's self-attention and the decoder's pointer
attention (:mod:`.distance_attention`: where it enters, which ``d`` and ``N``), with learned
``alpha`` initialised at 0; :meth:`DRLHQCostPolicy.with_distance_bias` starts it from a trained
DRLHQ-CF model, which it then decodes as (up to float rounding).
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
import torch.nn as nn
from tensordict import TensorDict

from .distance_attention import DistanceBiasDecoder, DistanceBiasEncoder, DistanceBiasPointer
from .drlhq import DRLHQPolicy
from .env_embeddings import CLRPInitEmbedding

#: Names of the appended features (the columns after DRLHQ's), in order.
DEPOT_EXTRA = ("log1p(O_i / L)", "log1p(Q_i / q)", "min(Q_i / T, 1)")
CUSTOMER_EXTRA = ("d_j / mean d",)
INSTANCE_EXTRA = ("log1p(F / L)", "log1p(mean O / L)", "log1p(sum Q / T)", "log(N) / 5")
#: DRLHQ's input sizes (:class:`CLRPInitEmbedding`).
DRLHQ_DEPOT, DRLHQ_CUSTOMER = 4, 3
#: Smallest spread of ``Q_i / O_i`` (as a share of its mean) the ratio feature divides by.
RATIO_FLOOR = 0.25


class CostFeatureInitEmbedding(CLRPInitEmbedding):
    """Initial node embeddings [B, D+N, E] from DRLHQ's features plus the cost structure
    (module docstring): depot inputs of size ``4 + 3 + 4``, customer inputs ``3 + 1 + 4``,
    two linear maps (parameter names as in :class:`CLRPInitEmbedding`).

    Args:
        embed_dim: embedding size ``E``.
        linear_bias: bias of the two input maps.
    """

    def __init__(self, embed_dim: int, linear_bias: bool = True):
        nn.Module.__init__(self)
        self.embed_dim = embed_dim
        depot = DRLHQ_DEPOT + len(DEPOT_EXTRA) + len(INSTANCE_EXTRA)
        customer = DRLHQ_CUSTOMER + len(CUSTOMER_EXTRA) + len(INSTANCE_EXTRA)
        self.init_embed_depot = nn.Linear(depot, embed_dim, bias=linear_bias)
        self.init_embed_customer = nn.Linear(customer, embed_dim, bias=linear_bias)

    @staticmethod
    def distance_scale(td: TensorDict) -> torch.Tensor:
        """``L`` [B, 1]: the side of the bounding square of ``cost_locs`` (``locs`` if absent)
        in cost units, x100 where ``rounded_costs``; at least :attr:`EPS` (all nodes at one
        point)."""
        locs = td["cost_locs"] if "cost_locs" in td.keys() else td["locs"]
        locs = locs.double()
        span = (locs.amax(-2) - locs.amin(-2)).amax(-1, keepdim=True)  # [B, 1]
        if "rounded_costs" in td.keys():
            rounded = td["rounded_costs"].reshape(span.shape)
            span = torch.where(rounded, 100.0 * span, span)
        return span.clamp(min=CLRPInitEmbedding.EPS)

    @staticmethod
    def ratio_feature(td: TensorDict) -> torch.Tensor:
        """``Q_i / O_i`` normalised over the depots with a floor on the spread, [B, D]:
        ``0.5 + (r_i - mid) / max(spread, RATIO_FLOOR x mean)`` with ``mid`` the middle of the
        ratios' range. Where the spread is at least ``RATIO_FLOOR x mean`` this is DRLHQ's
        min-max value, taken from :meth:`CLRPInitEmbedding.depot_features` (bitwise)."""
        eps = CLRPInitEmbedding.EPS
        ratio = td["depot_capacity"] / td["opening_cost"].clamp(min=eps)
        high, low = ratio.amax(-1, keepdim=True), ratio.amin(-1, keepdim=True)
        floor = RATIO_FLOOR * ratio.mean(-1, keepdim=True)
        near_equal = 0.5 + (ratio - (high + low) / 2) / floor.clamp(min=eps)
        drlhq = CLRPInitEmbedding.depot_features(td)[..., 0]
        return torch.where(high - low >= floor, drlhq, near_equal)

    @classmethod
    def features(cls, td: TensorDict) -> tuple[torch.Tensor, torch.Tensor]:
        """Depot features [B, D, 11] and customer features [B, N, 8] (float32; DRLHQ's
        columns computed as DRLHQ computes them, the new ones in float64). Accepts the env's
        reset state or an instance TensorDict."""
        eps = CLRPInitEmbedding.EPS
        capacity = td["depot_capacity"].double()  # [B, D]
        num_depots = capacity.shape[-1]
        demand = td["demand"].double()  # [B, N]
        batch = capacity.shape[:-1]
        q = td["vehicle_capacity"].double().reshape(*batch, 1)
        fixed = td["vehicle_fixed_cost"].double().reshape(*batch, 1)
        opening = td["opening_cost"].double()
        scale = cls.distance_scale(td)
        total = demand.sum(-1, keepdim=True).clamp(min=eps)  # T
        instance = torch.cat(
            [
                torch.log1p(fixed / scale),
                torch.log1p(opening.mean(-1, keepdim=True) / scale),
                torch.log1p(capacity.sum(-1, keepdim=True) / total),
                torch.full_like(q, math.log(demand.shape[-1]) / 5.0),
            ],
            dim=-1,
        )  # [B, 4]
        locs = cls.normalize_coordinates(td["locs"].float()).double()
        depot = torch.cat(
            [
                locs[..., :num_depots, :],
                cls.ratio_feature(td).double()[..., None],
                cls.depot_features(td).double()[..., 1:],  # DRLHQ's Q_i / T
                torch.log1p(opening / scale)[..., None],
                torch.log1p(capacity / q)[..., None],
                (capacity / total).clamp(max=1.0)[..., None],  # a feature: 1 = uncapacitated
                instance[..., None, :].expand(*batch, num_depots, -1),
            ],
            dim=-1,
        )
        mean_demand = demand.mean(-1, keepdim=True).clamp(min=eps)
        customer = torch.cat(
            [
                locs[..., num_depots:, :],
                (demand / q)[..., None],
                (demand / mean_demand)[..., None],
                instance[..., None, :].expand(*batch, demand.shape[-1], -1),
            ],
            dim=-1,
        )
        return depot.float(), customer.float()

    def forward(self, td: TensorDict) -> torch.Tensor:
        depot, customer = self.features(td)
        return torch.cat([self.init_embed_depot(depot), self.init_embed_customer(customer)], dim=-2)


class DRLHQCostPolicy(DRLHQPolicy):
    """DRLHQ-CF: :class:`~.drlhq.DRLHQPolicy` whose encoder input is
    :class:`CostFeatureInitEmbedding` (F, opening costs, depot and vehicle capacities in
    unit-free form; see the module docstring). Everything else (attention encoder, the
    heterogeneous location / routing query, RL4CO decoding, the env's start scheme,
    ``save_pretrained`` / ``from_pretrained``) is DRLHQ's; the constructor takes DRLHQ's
    arguments. Registered as ``"drlhqcf"``.

    Args:
        distance_bias: add the size-aware distance bias ``- alpha log2(N) d(i, j)`` to the
            encoder's self-attention (one ``alpha`` per layer and head) and to the pointer's
            glimpse (one per head) and logits (one), all ``alpha`` initialised at 0
            (:mod:`.distance_attention`). Recorded in :attr:`config` only when True, so
            configs saved without it (every shipped DRLHQ-CF model) build the policy without
            the bias.
        *args, **kwargs: those of :class:`~.drlhq.DRLHQPolicy`.
    """

    registry_name = "drlhqcf"

    def __init__(self, *args, distance_bias: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        linear_bias = self.encoder.init_embedding.init_embed_depot.bias is not None
        self.encoder.init_embedding = CostFeatureInitEmbedding(
            self.config["embed_dim"], linear_bias=linear_bias
        )
        if distance_bias:
            self._add_distance_bias()
            self.config["distance_bias"] = True

    def _add_distance_bias(self) -> None:
        """Replace the encoder's attention layers and the decoder by their distance-biased
        versions (:mod:`.distance_attention`), keeping every other module (and so every
        parameter name)."""
        config, old = self.config, self.encoder
        self.encoder = DistanceBiasEncoder(
            embed_dim=config["embed_dim"],
            init_embedding=old.init_embedding,
            num_heads=config["num_heads"],
            num_layers=config["num_encoder_layers"],
            normalization=config["normalization"],
            feedforward_hidden=config["feedforward_hidden"],
            env_name=old.env_name,
            sdpa_fn=old.net.layers[0][0].module.sdpa_fn if len(old.net.layers) else None,
        )
        dec = self.decoder
        pointer = DistanceBiasPointer(
            config["embed_dim"],
            config["num_heads"],
            mask_inner=dec.pointer.mask_inner,
            out_bias=dec.pointer.project_out.bias is not None,
            check_nan=dec.pointer.check_nan,
            sdpa_fn=dec.pointer.sdpa_fn,
        )
        pointer.project_out = dec.pointer.project_out
        decoder = DistanceBiasDecoder(
            embed_dim=config["embed_dim"],
            num_heads=config["num_heads"],
            env_name=dec.env_name,
            context_embedding=dec.context_embedding,
            dynamic_embedding=dec.dynamic_embedding,
            use_graph_context=dec.use_graph_context,
            pointer=pointer,
        )
        decoder.project_node_embeddings = dec.project_node_embeddings
        if not decoder.use_graph_context:  # as CLRPAttentionPolicy: unused, breaks DDP
            del decoder.project_fixed_context
        self.decoder = decoder

    @property
    def distance_bias(self) -> bool:
        """Whether the policy has the size-aware distance bias."""
        return bool(self.config.get("distance_bias", False))

    def distance_alphas(self) -> dict[str, torch.Tensor]:
        """The distance-bias parameters by name (empty without the bias)."""
        return {
            name: p
            for name, p in self.named_parameters()
            if name.endswith(("distance_alpha", "glimpse_alpha", "logit_alpha"))
        }

    @classmethod
    def with_distance_bias(cls, policy: DRLHQCostPolicy | str | Path) -> DRLHQCostPolicy:
        """A DRLHQ-CF policy with the distance bias that starts from a trained DRLHQ-CF
        model without it (a policy, a shipped name such as ``"drlhqcf_mixed"`` or a saved
        path): same configuration plus ``distance_bias=True``, every parameter copied, every
        ``alpha`` at 0, so until it is trained it decodes as ``policy`` does (the attention
        kernels round differently with a bias: logits agree to about 1e-6)."""
        if not isinstance(policy, nn.Module):
            policy = DRLHQCostPolicy.from_pretrained(policy)
        if type(policy) is not DRLHQCostPolicy:
            raise ValueError(f"policy: need a DRLHQCostPolicy, got {type(policy).__name__}")
        if policy.distance_bias:
            raise ValueError("policy: already has the distance bias")
        new = cls(**{**policy.config, "distance_bias": True})
        missing, unexpected = new.load_state_dict(policy.state_dict(), strict=False)
        alphas = set(new.distance_alphas())
        if unexpected or set(missing) != alphas:
            raise ValueError(
                f"policy: its weights do not fit the distance-biased policy (missing "
                f"{sorted(set(missing) - alphas)}, unexpected {sorted(unexpected)})"
            )
        return new

    @classmethod
    def from_drlhq(cls, drlhq: DRLHQPolicy | str | Path) -> DRLHQCostPolicy:
        """A DRLHQ-CF policy that starts from a trained DRLHQ model (a policy, a shipped name
        such as ``"drlhq_clrp100"`` or a saved path): every parameter copied, the input
        columns of the new features set to zero, so until it is trained it decodes exactly as
        ``drlhq`` does on instances whose ``Q_i / O_i`` spread over at least
        :data:`RATIO_FLOOR` of their mean."""
        if not isinstance(drlhq, DRLHQPolicy):
            drlhq = DRLHQPolicy.from_pretrained(drlhq)
        if type(drlhq) is not DRLHQPolicy:
            raise ValueError(f"drlhq: need a DRLHQPolicy, got {type(drlhq).__name__}")
        policy = cls(**drlhq.config)
        state = drlhq.state_dict()
        prefix = "encoder.init_embedding."
        for part, width in (
            ("init_embed_depot", DRLHQ_DEPOT),
            ("init_embed_customer", DRLHQ_CUSTOMER),
        ):
            key = f"{prefix}{part}.weight"
            old = state[key]
            new = torch.zeros_like(policy.state_dict()[key])
            new[:, :width] = old
            state[key] = new
        policy.load_state_dict(state)
        return policy
