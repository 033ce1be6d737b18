"""Policies for the CLRP: DRLHQ and its baselines POMO* and MTA*, on RL4CO's decoding."""

from .augmentation import rotate45_augmentation
from .base import CLRPPolicyMixin
from .baselines import MTADecoder, MTAEncoder, MTAPolicy, POMOStarPolicy
from .drlhq import DRLHQPolicy
from .embeddings import HeterogeneousQueryContext, LastNodeLoadContext
from .env_embeddings import CLRPContext, CLRPInitEmbedding, clrp_embeddings

#: Model names of the training / evaluation scripts.
POLICIES = {"drlhq": DRLHQPolicy, "pomo": POMOStarPolicy, "mta": MTAPolicy}

__all__ = [
    "CLRPContext",
    "CLRPPolicyMixin",
    "CLRPInitEmbedding",
    "DRLHQPolicy",
    "HeterogeneousQueryContext",
    "LastNodeLoadContext",
    "MTADecoder",
    "MTAEncoder",
    "MTAPolicy",
    "POLICIES",
    "POMOStarPolicy",
    "clrp_embeddings",
    "rotate45_augmentation",
]
