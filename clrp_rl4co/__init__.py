"""clrp-rl4co: the Capacitated Location-Routing Problem for RL4CO."""

from .data import CLRPInstance, CLRPSolution, instances_to_tensordict, read_prodhon
from .envs import CLRPEnv, CLRPGenerator
from .policies import (
    DRLHQCostPolicy,
    DRLHQPolicy,
    MTAPolicy,
    POMOStarPolicy,
    clrp_embeddings,
    load_policy,
)
from .search import sgbs

__all__ = [
    "CLRPEnv",
    "CLRPGenerator",
    "CLRPInstance",
    "CLRPSolution",
    "DRLHQCostPolicy",
    "DRLHQPolicy",
    "MTAPolicy",
    "POMOStarPolicy",
    "clrp_embeddings",
    "instances_to_tensordict",
    "load_policy",
    "read_prodhon",
    "sgbs",
]
__version__ = "0.1.0"
