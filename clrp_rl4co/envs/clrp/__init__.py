from .costs import round_cost, round_cost_np
from .env import CLRPEnv
from .generator import (
    PRESETS,
    CLRPGenerator,
    dataset_checksum,
    dataset_seed,
    generate_dataset,
    instance_tensordict,
    load_dataset,
    save_dataset,
)
from .render import render
from .validity import check_instance_validity, check_solution_validity

__all__ = [
    "PRESETS",
    "CLRPEnv",
    "CLRPGenerator",
    "check_instance_validity",
    "check_solution_validity",
    "dataset_checksum",
    "dataset_seed",
    "generate_dataset",
    "instance_tensordict",
    "load_dataset",
    "render",
    "round_cost",
    "round_cost_np",
    "save_dataset",
]
