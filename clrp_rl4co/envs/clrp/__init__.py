from .costs import cost_parts, round_cost, round_cost_np
from .dataset import (
    dataset_checksum,
    dataset_seed,
    generate_dataset,
    instances_checksum,
    load_dataset,
    save_dataset,
)
from .env import CLRPEnv
from .generator import (
    PRESETS,
    CLRPGenerator,
    PresetSampler,
    preset_sampler_class,
    register_preset,
    size_rule,
)
from .instance import INSTANCE_KEYS, instance_tensordict
from .render import plot_solution, render
from .validity import check_instance_validity, check_solution_validity

__all__ = [
    "INSTANCE_KEYS",
    "PRESETS",
    "CLRPEnv",
    "CLRPGenerator",
    "PresetSampler",
    "check_instance_validity",
    "check_solution_validity",
    "cost_parts",
    "dataset_checksum",
    "dataset_seed",
    "generate_dataset",
    "instance_tensordict",
    "instances_checksum",
    "load_dataset",
    "plot_solution",
    "preset_sampler_class",
    "register_preset",
    "render",
    "round_cost",
    "round_cost_np",
    "save_dataset",
    "size_rule",
]
