"""DRLHQ (Miao et al.): an attention model with heterogeneous location / routing queries."""

from __future__ import annotations

from .attention import CLRPAttentionPolicy
from .queries import HeterogeneousQueryContext


class DRLHQPolicy(CLRPAttentionPolicy):
    """DRLHQ policy for the CLRP as an RL4CO autoregressive policy.

    The CLRP attention model (:class:`~.attention.CLRPAttentionPolicy`: CLRP init embedding,
    attention encoder, RL4CO's attention decoder without graph context, RL4CO's decoding and the
    env's start scheme) with :class:`HeterogeneousQueryContext` as the decoder's query: ``q_L``
    at location steps, ``q_R`` at routing steps, learned placeholders at the first step.

    Works unchanged in ``POMO(env, policy=DRLHQPolicy(...))`` and
    ``AttentionModel(env, policy=DRLHQPolicy(...))``.

    Args: those of :class:`~.attention.CLRPAttentionPolicy` (paper: ``embed_dim=256``,
    ``num_encoder_layers=6``, ``num_heads=16``, ``feedforward_hidden=512``,
    ``normalization="instance"``, ``tanh_clipping=10``, the defaults).
    """

    #: The policy's name in :data:`.registry.POLICIES` (Hydra ``model=drlhq``, shipped models).
    registry_name = "drlhq"
    #: The decoder's query module (one instance per policy, built with ``embed_dim``).
    context_class = HeterogeneousQueryContext
