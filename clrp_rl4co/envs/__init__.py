"""The CLRP environment (``clrp/``, the same files as RL4CO's ``rl4co/envs/routing/clrp/``)
and the package's presets beyond the paper's, registered here by where they live: a preset's
module is imported when a generator first selects it. :class:`CLRPEnv` and
:class:`CLRPGenerator` are imported when first used (they import RL4CO)."""

from typing import TYPE_CHECKING

from . import clrp
from .clrp import register_preset

if TYPE_CHECKING:
    from .clrp import CLRPEnv, CLRPGenerator

#: The package's presets: name -> ``"module:PresetSampler subclass"``.
PACKAGE_PRESETS = {"mixed": "clrp_rl4co.mixed_preset:MixedSampler"}

for _name, _sampler in PACKAGE_PRESETS.items():
    register_preset(_name, _sampler)


def __getattr__(name: str):
    if name in ("CLRPEnv", "CLRPGenerator"):
        value = getattr(clrp, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["PACKAGE_PRESETS", "CLRPEnv", "CLRPGenerator"]
