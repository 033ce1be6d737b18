"""What the CLRP policies add to RL4CO's constructive policies: a default env.

Decoding is RL4CO's own (``ConstructivePolicy.forward`` and its decoding strategies): the CLRP
start scheme lives in the env (``CLRPEnv.select_start_nodes`` and its start action), so stock
multistart, beam search, POMO, SymNCO, PolyNet and EAS need nothing from the policy.
"""

from __future__ import annotations

from rl4co.envs.common.base import RL4COEnvBase
from tensordict import TensorDict

from ..envs import CLRPEnv

#: Architecture arguments of the CLRP policies and their defaults (the DRLHQ paper's sizes):
#: embedding size, attention layers (per stream for MTA*), heads, feed-forward hidden size,
#: normalisation and the pointer's tanh clipping ``C``.
ARCHITECTURE: dict[str, int | float | str] = {
    "embed_dim": 256,
    "num_encoder_layers": 6,
    "num_heads": 16,
    "feedforward_hidden": 512,
    "normalization": "instance",
    "tanh_clipping": 10.0,
}


def split_architecture(kwargs: dict) -> tuple[dict, dict]:
    """``(architecture, rest)``: the :data:`ARCHITECTURE` arguments in ``kwargs`` (defaults
    filled in) and the other arguments."""
    given = {k: v for k, v in kwargs.items() if k in ARCHITECTURE}
    rest = {k: v for k, v in kwargs.items() if k not in ARCHITECTURE}
    return {**ARCHITECTURE, **given}, rest


class CLRPPolicyMixin:
    """``forward(td, env=None, ...)``: a missing env or the name ``"clrp"`` becomes ``CLRPEnv()``
    (the released rl4co 0.7.0 cannot build the CLRP env from its name); everything else is
    RL4CO's ``forward``."""

    def forward(self, td: TensorDict, env: str | RL4COEnvBase | None = None, *args, **kwargs):
        if env is None or env == "clrp":
            env = CLRPEnv()
        return super().forward(td, env, *args, **kwargs)
