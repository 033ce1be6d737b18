"""Policies for the CLRP: DRLHQ and its baselines POMO* and MTA*, with the CLRP start scheme."""

from .augmentation import rotate45_augmentation
from .baselines import MTADecoder, MTAEncoder, MTAPolicy, POMOStarPolicy
from .drlhq import DRLHQPolicy
from .embeddings import CLRPInitEmbedding, HeterogeneousQueryContext, LastNodeLoadContext
from .start_scheme import StartSchemeMixin, get_start_scheme_strategy, restrict_start_mask

#: Model names of the training / evaluation scripts.
POLICIES = {"drlhq": DRLHQPolicy, "pomo": POMOStarPolicy, "mta": MTAPolicy}

__all__ = [
    "CLRPInitEmbedding",
    "DRLHQPolicy",
    "HeterogeneousQueryContext",
    "LastNodeLoadContext",
    "MTADecoder",
    "MTAEncoder",
    "MTAPolicy",
    "POLICIES",
    "POMOStarPolicy",
    "StartSchemeMixin",
    "get_start_scheme_strategy",
    "restrict_start_mask",
    "rotate45_augmentation",
]
