"""Checkpoints pickled before a class moved: a pickle module for ``torch.load`` that finds
each class of :data:`MOVED` at its home now.

Lightning checkpoints pickle the env with its generator (and so preset ``"mixed"``'s sampler
and ranges) under the module names of the day. Those written while the preset lived in the env
folder or in ``clrp_rl4co/generators/`` still load through this module::

    torch.load(path, weights_only=False, pickle_module=clrp_rl4co.policies.unpickling)

which :func:`clrp_rl4co.policies.pretrained.load_checkpoint` (``weights_only=False``) and the
training's resume (:class:`clrp_rl4co.models.training.MovedClassesCheckpointIO`) do.
"""

from __future__ import annotations

import pickle
from typing import IO, Any

#: ``(former module, class name) -> (module, class name)`` of classes that moved.
MOVED: dict[tuple[str, str], tuple[str, str]] = {
    ("clrp_rl4co.envs.clrp.generator", "MixedRanges"): ("clrp_rl4co.mixed_preset", "MixedRanges"),
    ("clrp_rl4co.generators.mixed", "MixedRanges"): ("clrp_rl4co.mixed_preset", "MixedRanges"),
    ("clrp_rl4co.generators.mixed", "MixedSampler"): ("clrp_rl4co.mixed_preset", "MixedSampler"),
}


class Unpickler(pickle.Unpickler):
    """:class:`pickle.Unpickler` that looks the classes of :data:`MOVED` up at their home."""

    def find_class(self, module: str, name: str) -> Any:
        module, name = MOVED.get((module, name), (module, name))
        return super().find_class(module, name)


def load(file: IO[bytes], **kwargs: Any) -> Any:
    """:func:`pickle.load` with :class:`Unpickler` (``torch.load``'s ``pickle_module`` API)."""
    return Unpickler(file, **kwargs).load()
