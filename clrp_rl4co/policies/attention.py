"""The attention-model policy for the CLRP that DRLHQ and POMO* share; they differ in the query."""

from __future__ import annotations

import torch.nn as nn
from rl4co.models.nn.env_embeddings.dynamic import StaticEmbedding
from rl4co.models.zoo.am.policy import AttentionModelPolicy

from .base import ARCHITECTURE, CLRPPolicyMixin
from .env_embeddings import CLRPInitEmbedding
from .pretrained import PretrainedMixin
from .queries import PrecomputedQueryDecoder


class CLRPAttentionPolicy(CLRPPolicyMixin, PretrainedMixin, AttentionModelPolicy):
    """RL4CO's attention model on the CLRP, with the decoder's query given by ``context_class``.

    - Encoder: :class:`CLRPInitEmbedding` (depot 4 / customer 3 features, two linear maps,
      per-instance coordinate normalisation) then ``num_encoder_layers`` attention layers
      (multi-head attention, feed-forward, ``normalization``; RL4CO's ``GraphAttentionNetwork``).
    - Decoder: RL4CO's ``AttentionModelDecoder`` (:class:`PrecomputedQueryDecoder`) with
      ``context_class(embed_dim)`` as the query. No graph context (``use_graph_context=False``);
      static keys/values computed once per instance; masked multi-head glimpse and a
      single-head pointer; the decoding strategy applies tanh clipping ``C = tanh_clipping``.
    - Decoding: RL4CO's own (greedy, sampling, multistart_greedy, multistart_sampling,
      beam_search, evaluate); multistart starts follow the env's start scheme
      (``CLRPEnv.select_start_nodes``).

    A subclass sets ``context_class``: a module built as ``context_class(embed_dim)`` whose
    ``precompute(h)`` and ``query(parts, td)`` give the decoder's query (see
    :mod:`.queries`). The class name is what :meth:`save_pretrained` records, so each
    shipped model names its subclass.

    Args:
        embed_dim: embedding size (DRLHQ paper: 256).
        num_encoder_layers: attention layers (paper: 6).
        num_heads: attention heads (paper: 16).
        feedforward_hidden: feed-forward hidden size (paper: 512).
        normalization: ``"instance"`` (paper), ``"batch"`` or ``"layer"``.
        tanh_clipping: logit clipping ``C``.
        train_decode_type, val_decode_type, test_decode_type: RL4CO decode types.
        env_name: RL4CO's env name (only ``"clrp"`` is meaningful).
        **kwargs: passed to :class:`AttentionModelPolicy`.
    """

    #: The decoder's query module class; set by each subclass.
    context_class: type[nn.Module] | None = None

    def __init__(
        self,
        embed_dim: int = ARCHITECTURE["embed_dim"],
        num_encoder_layers: int = ARCHITECTURE["num_encoder_layers"],
        num_heads: int = ARCHITECTURE["num_heads"],
        feedforward_hidden: int = ARCHITECTURE["feedforward_hidden"],
        normalization: str = ARCHITECTURE["normalization"],
        tanh_clipping: float = ARCHITECTURE["tanh_clipping"],
        train_decode_type: str = "sampling",
        val_decode_type: str = "greedy",
        test_decode_type: str = "greedy",
        env_name: str = "clrp",
        **kwargs,
    ):
        if self.context_class is None:
            raise TypeError(
                f"{type(self).__name__}: set the class attribute context_class (the decoder's "
                "query module, e.g. HeterogeneousQueryContext); CLRPAttentionPolicy has none"
            )
        config = dict(
            embed_dim=embed_dim,
            num_encoder_layers=num_encoder_layers,
            num_heads=num_heads,
            feedforward_hidden=feedforward_hidden,
            normalization=normalization,
            tanh_clipping=tanh_clipping,
        )
        super().__init__(
            **config,
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
            train_decode_type=train_decode_type,
            val_decode_type=val_decode_type,
            test_decode_type=test_decode_type,
            **kwargs,
        )
        self.config = config
        if not self.decoder.use_graph_context:  # unused: would break DDP's gradient reduction
            del self.decoder.project_fixed_context
