"""The package's ``CLRPEnv``: the RL4CO env plus reference solvers (PyVRP, HiGHS).

The env folder (:mod:`clrp_rl4co.envs.clrp`, also contributed to RL4CO) knows nothing of the
classical solvers; this thin subclass adds RL4CO's optional ``solve`` / ``local_search``
methods on top of it. ``from clrp_rl4co import CLRPEnv`` gives this class.
"""

from __future__ import annotations

import torch
from tensordict import TensorDict

from ..envs.clrp import CLRPEnv as RL4COCLRPEnv
from .api import local_search_td, solve_td


class CLRPEnv(RL4COCLRPEnv):
    """:class:`clrp_rl4co.envs.clrp.CLRPEnv` with ``solve`` and ``local_search``."""

    def solve(
        self,
        instances: TensorDict,
        max_runtime: float,
        num_procs: int = 1,
        solver: str = "pyvrp",
        **kwargs,
    ):
        """Reference solutions: ``(actions [B, T], costs [B])`` with *positive* costs in the
        instance's units (RL4CO's MTVRP returns negated costs; we do not). See
        :func:`clrp_rl4co.solvers.solve_td`."""
        return solve_td(instances, max_runtime, num_procs=num_procs, solver=solver, **kwargs)

    @staticmethod
    def local_search(td: TensorDict, actions: torch.Tensor, **kwargs) -> torch.Tensor:
        """Improve the solutions ``actions`` [B, T] with PyVRP (never worse); see
        :func:`clrp_rl4co.solvers.local_search_td`."""
        return local_search_td(td, actions, **kwargs)
