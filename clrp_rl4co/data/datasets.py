"""Pinned datasets: read an instance file, or draw it from its seed, and check its checksum.

The files themselves are written and read by :func:`clrp_rl4co.envs.clrp.save_dataset` /
:func:`~clrp_rl4co.envs.clrp.load_dataset` (``.npz`` with the seed and a SHA-256 over the
instance arrays); this module adds the rule that a published dataset must keep its checksum,
whether it is read from disk or regenerated.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tensordict import TensorDict

from ..envs.clrp import INSTANCE_KEYS, dataset_checksum, load_dataset, save_dataset


def instances_checksum(td: TensorDict) -> str:
    """Checksum of an instance TensorDict ``[B]`` as :func:`save_dataset` records it."""
    return dataset_checksum({k: td[k].detach().cpu().numpy() for k in INSTANCE_KEYS})


def load_or_draw(
    path: str | Path,
    draw: Callable[[], TensorDict],
    seed: int,
    expected: str | None,
    write: bool = True,
) -> TensorDict:
    """Read the dataset at ``path``, or ``draw()`` it (and write it, compressed, with ``seed``
    when ``write``) when the file is missing; either way its checksum must equal ``expected``
    (when given), else ``ValueError`` naming the file."""
    path = Path(path)
    if path.is_file():
        td = load_dataset(path)
    else:
        td = draw()
        if write:
            path.parent.mkdir(parents=True, exist_ok=True)
            save_dataset(td, path, seed=seed, compress=True)
    checksum = instances_checksum(td)
    if expected is not None and checksum != expected:
        raise ValueError(
            f"{path}: checksum {checksum[:12]}... differs from the published {expected[:12]}... "
            "(the file or the generator changed)"
        )
    return td
