"""The CLRP environment (``clrp/``, the same files as RL4CO's ``rl4co/envs/routing/clrp/``)
and the package's presets beyond the paper's, registered here by where they live: a preset's
module is imported when a generator first selects it."""

from .clrp import CLRPEnv, CLRPGenerator, register_preset

#: The package's presets: name -> ``"module:PresetSampler subclass"``.
PACKAGE_PRESETS = {"mixed": "clrp_rl4co.mixed_preset:MixedSampler"}

for _name, _sampler in PACKAGE_PRESETS.items():
    register_preset(_name, _sampler)

__all__ = ["PACKAGE_PRESETS", "CLRPEnv", "CLRPGenerator"]
