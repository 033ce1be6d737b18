"""Search methods on top of RL4CO policies."""

from .sgbs import SGBSResult, sgbs

__all__ = ["SGBSResult", "sgbs"]
