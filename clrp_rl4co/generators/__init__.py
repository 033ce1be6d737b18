"""Instance distributions beyond the DRLHQ paper's, plugged into
:class:`~clrp_rl4co.envs.clrp.generator.CLRPGenerator` as presets when this package is
imported (``import clrp_rl4co`` does it):

- ``preset="mixed"`` (:mod:`.mixed`): wide ranges of sizes, costs, capacities and layouts for
  training beyond the paper's presets (:class:`~.mixed.MixedRanges`).
"""

from .mixed import MixedRanges, MixedSampler, mixed_num_depots

__all__ = ["MixedRanges", "MixedSampler", "mixed_num_depots"]
