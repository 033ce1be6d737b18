"""Builders shared by the training / evaluation scripts and the Hydra entry point."""

from ..policies import build_policy, load_policy
from .build import (
    ALGORITHMS,
    PolicyConfigCallback,
    build_model,
    fixed_dataset,
    monitor_metric,
    paper_lr_schedule,
)
from .evaluation import DecodeSpec, decode_batch

__all__ = [
    "DecodeSpec",
    "ALGORITHMS",
    "PolicyConfigCallback",
    "build_model",
    "build_policy",
    "decode_batch",
    "fixed_dataset",
    "load_policy",
    "monitor_metric",
    "paper_lr_schedule",
]
