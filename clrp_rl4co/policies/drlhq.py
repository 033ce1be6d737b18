"""DRLHQ (Miao et al.): an attention model with heterogeneous location / routing queries."""

from __future__ import annotations

from rl4co.models.nn.env_embeddings.dynamic import StaticEmbedding
from rl4co.models.zoo.am.policy import AttentionModelPolicy

from .base import CLRPPolicyMixin
from .embeddings import CLRPInitEmbedding, HeterogeneousQueryContext, PrecomputedQueryDecoder
from .pretrained import PretrainedMixin


class DRLHQPolicy(CLRPPolicyMixin, PretrainedMixin, AttentionModelPolicy):
    """DRLHQ policy for the CLRP as an RL4CO autoregressive policy.

    - Encoder: :class:`CLRPInitEmbedding` (depot 4 / customer 3 features, two linear maps,
      per-instance coordinate normalisation) then ``num_encoder_layers`` attention layers
      (multi-head attention, feed-forward, ``normalization``; RL4CO's ``GraphAttentionNetwork``).
    - Decoder: RL4CO's ``AttentionModelDecoder`` (:class:`PrecomputedQueryDecoder`) with
      :class:`HeterogeneousQueryContext` as the query: ``q_L`` at location steps, ``q_R`` at
      routing steps, learned placeholders at the first step. No graph context
      (``use_graph_context=False``); static keys/values computed once per instance; masked
      multi-head glimpse and a single-head pointer; the decoding strategy applies tanh
      clipping ``C = tanh_clipping`` (10).
    - Decoding: RL4CO's own (greedy, sampling, multistart_greedy, multistart_sampling,
      beam_search, evaluate); multistart starts follow DRLHQ's start scheme, which the env
      implements (``CLRPEnv.select_start_nodes``).

    Works unchanged in ``POMO(env, policy=DRLHQPolicy(...))`` and
    ``AttentionModel(env, policy=DRLHQPolicy(...))``.

    Args:
        embed_dim: embedding size (paper: 256).
        num_encoder_layers: attention layers (paper: 6).
        num_heads: attention heads (paper: 16).
        feedforward_hidden: feed-forward hidden size (paper: 512).
        normalization: ``"instance"`` (paper), ``"batch"`` or ``"layer"``.
        tanh_clipping: logit clipping ``C``.
        train_decode_type, val_decode_type, test_decode_type: RL4CO decode types.
        env_name: RL4CO's env name (only ``"clrp"`` is meaningful).
        **kwargs: passed to :class:`AttentionModelPolicy`.
    """

    #: The decoder's query module (one instance per policy, built with ``embed_dim``).
    context_class = HeterogeneousQueryContext

    def __init__(
        self,
        embed_dim: int = 256,
        num_encoder_layers: int = 6,
        num_heads: int = 16,
        feedforward_hidden: int = 512,
        normalization: str = "instance",
        tanh_clipping: float = 10.0,
        train_decode_type: str = "sampling",
        val_decode_type: str = "greedy",
        test_decode_type: str = "greedy",
        env_name: str = "clrp",
        **kwargs,
    ):
        self_config = dict(
            embed_dim=embed_dim,
            num_encoder_layers=num_encoder_layers,
            num_heads=num_heads,
            feedforward_hidden=feedforward_hidden,
            normalization=normalization,
            tanh_clipping=tanh_clipping,
        )
        super().__init__(
            embed_dim=embed_dim,
            num_encoder_layers=num_encoder_layers,
            num_heads=num_heads,
            feedforward_hidden=feedforward_hidden,
            normalization=normalization,
            env_name=env_name,
            init_embedding=CLRPInitEmbedding(embed_dim),
            decoder=PrecomputedQueryDecoder(
                embed_dim=embed_dim,
                num_heads=num_heads,
                env_name=env_name,
                context_embedding=self.context_class(embed_dim),
                dynamic_embedding=StaticEmbedding(),
                use_graph_context=False,
            ),
            tanh_clipping=tanh_clipping,
            train_decode_type=train_decode_type,
            val_decode_type=val_decode_type,
            test_decode_type=test_decode_type,
            **kwargs,
        )
        self.config = self_config
        if not self.decoder.use_graph_context:  # unused: would break DDP's gradient reduction
            del self.decoder.project_fixed_context
