from .env import CLRPEnv
from .generator import (
    PRESETS,
    CLRPGenerator,
    dataset_checksum,
    dataset_seed,
    generate_dataset,
    load_dataset,
    save_dataset,
)
from .render import render
from .validity import check_solution_validity

__all__ = [
    "PRESETS",
    "CLRPEnv",
    "CLRPGenerator",
    "check_solution_validity",
    "dataset_checksum",
    "dataset_seed",
    "generate_dataset",
    "load_dataset",
    "render",
    "save_dataset",
]
