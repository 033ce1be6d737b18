"""The CLRP environment. :class:`CLRPEnv` and :class:`CLRPGenerator` (which import RL4CO) are
imported when first used, so that the instance layout, costs, checks and presets import only
torch and tensordict."""

import importlib
from typing import TYPE_CHECKING

from .costs import cost_parts, round_cost, round_cost_np
from .dataset import (
    dataset_checksum,
    dataset_seed,
    generate_dataset,
    instances_checksum,
    load_dataset,
    save_dataset,
)
from .instance import INSTANCE_KEYS, instance_tensordict
from .presets import PRESETS, PresetSampler, preset_sampler_class, register_preset, size_rule
from .render import plot_solution, render
from .validity import check_instance_validity, check_solution_validity

if TYPE_CHECKING:
    from .env import CLRPEnv
    from .generator import CLRPGenerator

#: Names imported when first used: name -> module.
_LAZY = {"CLRPEnv": ".env", "CLRPGenerator": ".generator"}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
