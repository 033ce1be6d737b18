"""Seeded ``.npz`` datasets of instances: draw (:func:`generate_dataset`), write
(:func:`save_dataset`), read (:func:`load_dataset`, the env's ``load_data``), with a checksum
over the instance arrays (:func:`dataset_checksum`, :func:`instances_checksum`) and the seed
recorded in the file."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from tensordict import TensorDict

from .instance import INSTANCE_KEYS


def dataset_checksum(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over the instance arrays (key names, dtypes, shapes and bytes, keys sorted)."""
    h = hashlib.sha256()
    for key in sorted(arrays):
        arr = np.ascontiguousarray(arrays[key])
        h.update(f"{key}|{arr.dtype.str}|{arr.shape}|".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def instances_checksum(td: TensorDict) -> str:
    """Checksum of an instance TensorDict ``[B]`` as :func:`save_dataset` records it."""
    return dataset_checksum({k: td[k].detach().cpu().numpy() for k in INSTANCE_KEYS})


def generate_dataset(generator: Callable[[int], TensorDict], size: int, seed: int) -> TensorDict:
    """``size`` instances drawn with a private, seeded RNG (the global RNG is left untouched).

    Args:
        generator: a :class:`~.generator.CLRPGenerator` (any callable ``generator(size)``).
        size: number of instances; seed: the seed of the private RNG.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return generator(size)


def save_dataset(
    td: TensorDict, path: str | Path, seed: int | None = None, compress: bool = False
) -> str:
    """Save an instance TensorDict to ``.npz`` with its seed and checksum; returns the checksum.

    With ``compress=True`` the file is zip-compressed and ``cost_locs`` is left out when it
    equals ``locs`` in float64 (generated instances); :func:`load_dataset` restores it, and the
    checksum is the same either way (it covers every key of :data:`INSTANCE_KEYS`).
    """
    arrays = {k: td[k].detach().cpu().numpy() for k in INSTANCE_KEYS}
    checksum = dataset_checksum(arrays)
    meta = {
        "meta_checksum": np.array(checksum),
        "meta_seed": np.array(-1 if seed is None else int(seed)),
    }
    if compress:
        if np.array_equal(arrays["cost_locs"], arrays["locs"].astype(np.float64)):
            del arrays["cost_locs"]
        np.savez_compressed(path, **arrays, **meta)
    else:
        np.savez(path, **arrays, **meta)
    return checksum


def load_dataset(path: str | Path, verify: bool = True) -> TensorDict:
    """Load a dataset written by :func:`save_dataset`; raises ``ValueError`` on a bad checksum.

    Files with only some of the instance keys (e.g. written by other tools) must hold at least
    ``locs``, ``depot_capacity``, ``opening_cost``, ``demand``, ``vehicle_capacity`` and
    ``vehicle_fixed_cost``; ``cost_locs`` defaults to ``locs`` and ``rounded_costs`` to False.
    """
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if not k.startswith("meta_")}
        checksum = str(data["meta_checksum"]) if "meta_checksum" in data.files else None
    missing = [
        k for k in INSTANCE_KEYS if k not in arrays and k not in ("cost_locs", "rounded_costs")
    ]
    if missing:
        raise ValueError(f"{path}: missing arrays {missing}")
    batch = arrays["locs"].shape[0]
    arrays.setdefault("cost_locs", arrays["locs"].astype(np.float64))
    arrays.setdefault("rounded_costs", np.zeros(batch, dtype=bool))
    if verify and checksum is not None and dataset_checksum(arrays) != checksum:
        raise ValueError(f"{path}: checksum mismatch (file modified or truncated)")
    tensors = {k: torch.from_numpy(np.asarray(v)) for k, v in arrays.items()}
    for key in ("vehicle_capacity", "vehicle_fixed_cost"):
        if tensors[key].dim() == 1:
            tensors[key] = tensors[key][:, None]
    return TensorDict(tensors, batch_size=[batch])


def dataset_seed(path: str | Path) -> int | None:
    """The seed recorded in a dataset file (None if not recorded)."""
    with np.load(path) as data:
        if "meta_seed" not in data.files:
            return None
        seed = int(data["meta_seed"])
    return None if seed < 0 else seed
