from .clrp import CLRPEnv, CLRPGenerator

__all__ = ["CLRPEnv", "CLRPGenerator"]
