"""What the CLRP policies add to RL4CO's constructive policies: a default env.

Decoding is RL4CO's own (``ConstructivePolicy.forward`` and its decoding strategies): the CLRP
start scheme lives in the env (``CLRPEnv.select_start_nodes`` and its start action), so stock
multistart, beam search, POMO, SymNCO, PolyNet and EAS need nothing from the policy.
"""

from __future__ import annotations

from rl4co.envs.common.base import RL4COEnvBase
from tensordict import TensorDict

from ..envs import CLRPEnv


class CLRPPolicyMixin:
    """``forward(td, env=None, ...)``: a missing env or the name ``"clrp"`` becomes ``CLRPEnv()``
    (the released rl4co 0.7.0 cannot build the CLRP env from its name); everything else is
    RL4CO's ``forward``."""

    def forward(self, td: TensorDict, env: str | RL4COEnvBase | None = None, *args, **kwargs):
        if env is None or env == "clrp":
            env = CLRPEnv()
        return super().forward(td, env, *args, **kwargs)
