"""clrp-rl4co: the Capacitated Location-Routing Problem for RL4CO.

The public names are imported on first use (``from clrp_rl4co import CLRPEnv`` loads torch and
RL4CO then; ``import clrp_rl4co.cli`` alone does not), so the command answers ``--help`` at once.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .result import SolveResult
from .solving import solve, solve_many

#: Public name -> the module that defines it.
_EXPORTS = {
    "CLRPEnv": ".envs",
    "CLRPGenerator": ".envs",
    "CLRPInstance": ".data",
    "CLRPSolution": ".data",
    "DRLHQCostPolicy": ".policies",
    "DRLHQPolicy": ".policies",
    "MTAPolicy": ".policies",
    "POMOStarPolicy": ".policies",
    "clrp_embeddings": ".policies",
    "instances_to_tensordict": ".data",
    "load_policy": ".policies",
    "read_instance": ".data.files",
    "read_prodhon": ".data",
    "sgbs": ".search.sgbs",
}

__all__ = [
    "CLRPEnv",
    "CLRPGenerator",
    "CLRPInstance",
    "CLRPSolution",
    "DRLHQCostPolicy",
    "DRLHQPolicy",
    "MTAPolicy",
    "POMOStarPolicy",
    "SolveResult",
    "clrp_embeddings",
    "instances_to_tensordict",
    "load_policy",
    "read_instance",
    "read_prodhon",
    "sgbs",
    "solve",
    "solve_many",
]
__version__ = "0.1.0"

if TYPE_CHECKING:
    from .data import CLRPInstance, CLRPSolution, instances_to_tensordict, read_prodhon
    from .data.files import read_instance
    from .envs import CLRPEnv, CLRPGenerator
    from .policies import (
        DRLHQCostPolicy,
        DRLHQPolicy,
        MTAPolicy,
        POMOStarPolicy,
        clrp_embeddings,
        load_policy,
    )
    from .search.sgbs import sgbs


def __getattr__(name: str):
    if name in _EXPORTS:
        module = importlib.import_module(_EXPORTS[name], __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
