"""clrp-rl4co: the Capacitated Location-Routing Problem for RL4CO."""

from . import generators  # noqa: F401  (registers CLRPGenerator(preset="mixed"))
from .data import CLRPInstance, CLRPSolution, instances_to_tensordict, read_prodhon
from .envs import CLRPGenerator
from .policies import DRLHQPolicy, MTAPolicy, POMOStarPolicy
from .search import sgbs
from .solvers import CLRPEnv

__all__ = [
    "CLRPEnv",
    "CLRPGenerator",
    "CLRPInstance",
    "CLRPSolution",
    "DRLHQPolicy",
    "MTAPolicy",
    "POMOStarPolicy",
    "instances_to_tensordict",
    "read_prodhon",
    "sgbs",
]
__version__ = "0.1.0"
