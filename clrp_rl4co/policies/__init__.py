"""Policies for the CLRP: DRLHQ and its baselines POMO* and MTA*, on RL4CO's decoding."""

from ..pretrained import PRETRAINED_DIR, shipped_models
from .augmentation import rotate45_augmentation
from .base import CLRPPolicyMixin
from .baselines import MTADecoder, MTAEncoder, MTAPolicy, POMOStarPolicy
from .cost_features import CostFeatureInitEmbedding, DRLHQCostPolicy
from .drlhq import DRLHQPolicy
from .env_embeddings import CLRPContext, CLRPInitEmbedding, clrp_embeddings
from .pretrained import policy_config
from .queries import HeterogeneousQueryContext, LastNodeLoadContext
from .registry import (
    POLICIES,
    TITLES,
    build_policy,
    load_policy,
    policy_class,
    policy_name,
)

__all__ = [
    "CLRPContext",
    "CLRPPolicyMixin",
    "CLRPInitEmbedding",
    "CostFeatureInitEmbedding",
    "DRLHQCostPolicy",
    "DRLHQPolicy",
    "HeterogeneousQueryContext",
    "LastNodeLoadContext",
    "MTADecoder",
    "MTAEncoder",
    "MTAPolicy",
    "POLICIES",
    "POMOStarPolicy",
    "PRETRAINED_DIR",
    "TITLES",
    "build_policy",
    "clrp_embeddings",
    "load_policy",
    "policy_class",
    "policy_config",
    "policy_name",
    "rotate45_augmentation",
    "shipped_models",
]
