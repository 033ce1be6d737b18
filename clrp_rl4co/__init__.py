"""clrp-rl4co: the Capacitated Location-Routing Problem for RL4CO."""

from .data import CLRPInstance, CLRPSolution, instances_to_tensordict, read_prodhon
from .envs import CLRPEnv, CLRPGenerator

__all__ = [
    "CLRPEnv",
    "CLRPGenerator",
    "CLRPInstance",
    "CLRPSolution",
    "instances_to_tensordict",
    "read_prodhon",
]
__version__ = "0.1.0"
