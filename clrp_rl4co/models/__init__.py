"""Builders shared by the training / evaluation scripts and the Hydra entry point."""

from .build import (
    ALGORITHMS,
    PolicyConfigCallback,
    build_model,
    build_policy,
    fixed_dataset,
    load_policy,
    monitor_metric,
    paper_lr_schedule,
)
from .evaluation import DecodeSpec, solve

__all__ = [
    "DecodeSpec",
    "ALGORITHMS",
    "PolicyConfigCallback",
    "build_model",
    "build_policy",
    "fixed_dataset",
    "load_policy",
    "monitor_metric",
    "paper_lr_schedule",
    "solve",
]
