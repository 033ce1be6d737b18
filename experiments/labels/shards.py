"""One shard of expert labels: its file layout, its checksum, writing and reading.

A shard ``datasets/labels/<preset>/shard_<k>.npz`` holds the instances of one seeded draw
(:func:`clrp_rl4co.envs.clrp.generate_dataset` with :func:`shard_seed`) and, for the first
``count`` of them, the solver's solution as env actions:

* the instance arrays of :data:`clrp_rl4co.envs.clrp.INSTANCE_KEYS` (``cost_locs`` left out
  when it equals ``locs``), every instance of the draw;
* ``actions`` int16 [count, T]: env node indices (depots ``0..D-1``, customer ``j`` is
  ``D + j``), padded with the env's no-op (``PADDING_ACTION``);
* ``action_length`` int32 [count]: the length of each row before its padding;
* ``objective`` float64 [count]: the solution's cost in the instance's units;
* ``cpu_seconds`` / ``wall_seconds`` float64 [count]: what the solver spent on each instance;
* ``meta_checksum``: SHA-256 over every array above (:func:`clrp_rl4co.envs.clrp.dataset_checksum`);
* ``meta_provenance``: JSON (preset, generator seed, draw size, solver, budget, commit, software).

A shard with ``count`` below the draw size is in progress: :mod:`.make` resumes it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tensordict import TensorDict

from clrp_rl4co.envs.clrp import INSTANCE_KEYS, dataset_checksum
from clrp_rl4co.envs.clrp.validity import PADDING_ACTION

#: Seed of shard 0 of each preset; shard ``k`` uses ``base + k``. Far from every seed of the
#: package's test, validation and OOD sets (``experiments/published_sets.py`` 777000, the
#: paper's 1234, the generalist's validation 20261127 + N, the OOD families' and the
#: generalist's training stream, which counts steps from 0), so no label instance is a test or
#: validation instance.
PRESET_SEEDS: dict[str, int] = {
    "clrp10": 610_100_000,
    "clrp20": 610_200_000,
    "clrp50": 610_500_000,
    "clrp100": 611_000_000,
    "mixed": 612_000_000,
}
#: Customers per shard of the mixed preset, in turn by shard index.
MIXED_SIZES = (20, 50, 100, 200)
#: Arrays of a shard besides the instance arrays.
LABEL_KEYS = ("actions", "action_length", "objective", "cpu_seconds", "wall_seconds")


def shard_seed(preset: str, index: int) -> int:
    """The generator seed of shard ``index`` of ``preset``."""
    if preset not in PRESET_SEEDS:
        raise ValueError(f"preset: no label seeds for {preset!r} (known: {list(PRESET_SEEDS)})")
    if index < 0:
        raise ValueError(f"index: must be >= 0, got {index}")
    return PRESET_SEEDS[preset] + index


def shard_num_loc(preset: str, index: int) -> int | None:
    """Customers of shard ``index`` (None: the preset's own size)."""
    return MIXED_SIZES[index % len(MIXED_SIZES)] if preset == "mixed" else None


def shard_path(folder: Path, index: int) -> Path:
    return Path(folder) / f"shard_{index:05d}.npz"


@dataclass
class Shard:
    """A shard in memory.

    Attributes:
        instances: the whole draw (TensorDict of :data:`INSTANCE_KEYS`, batch [size]).
        actions: one action list per solved instance (the first ``len(actions)`` of the draw).
        objective, cpu_seconds, wall_seconds: one float per solved instance.
        provenance: JSON-able description of how the shard was made.
    """

    instances: TensorDict
    actions: list[list[int]]
    objective: list[float]
    cpu_seconds: list[float]
    wall_seconds: list[float]
    provenance: dict

    @property
    def size(self) -> int:
        return int(self.instances.batch_size[0])

    @property
    def count(self) -> int:
        return len(self.actions)

    @property
    def complete(self) -> bool:
        return self.count >= self.size

    def solved_instances(self) -> TensorDict:
        """The instances that have a label (the first :attr:`count`)."""
        return self.instances[: self.count]

    def padded_actions(self) -> torch.Tensor:
        """LongTensor [count, T] padded with ``PADDING_ACTION``."""
        length = max((len(a) for a in self.actions), default=0)
        out = torch.full((self.count, length), PADDING_ACTION, dtype=torch.long)
        for row, acts in enumerate(self.actions):
            out[row, : len(acts)] = torch.as_tensor(acts, dtype=torch.long)
        return out


def _arrays(shard: Shard) -> dict[str, np.ndarray]:
    arrays = {k: shard.instances[k].detach().cpu().numpy() for k in INSTANCE_KEYS}
    arrays["actions"] = shard.padded_actions().numpy().astype(np.int16)
    arrays["action_length"] = np.asarray([len(a) for a in shard.actions], dtype=np.int32)
    arrays["objective"] = np.asarray(shard.objective, dtype=np.float64)
    arrays["cpu_seconds"] = np.asarray(shard.cpu_seconds, dtype=np.float64)
    arrays["wall_seconds"] = np.asarray(shard.wall_seconds, dtype=np.float64)
    return arrays


def write_shard(shard: Shard, path: Path) -> str:
    """Write ``shard`` to ``path`` atomically (a temporary file, then a rename); returns the
    checksum."""
    arrays = _arrays(shard)
    checksum = dataset_checksum(arrays)
    if np.array_equal(arrays["cost_locs"], arrays["locs"].astype(np.float64)):
        del arrays["cost_locs"]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as handle:
        np.savez_compressed(
            handle,
            **arrays,
            meta_checksum=np.array(checksum),
            meta_provenance=np.array(json.dumps(shard.provenance, sort_keys=True)),
        )
    os.replace(tmp, path)
    return checksum


def read_shard(path: Path, verify: bool = True) -> Shard:
    """Read a shard written by :func:`write_shard`.

    Raises:
        ValueError: an array is missing, or (``verify``) the checksum does not match, naming
            the file.
    """
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if not k.startswith("meta_")}
        checksum = str(data["meta_checksum"]) if "meta_checksum" in data.files else None
        provenance = (
            json.loads(str(data["meta_provenance"])) if "meta_provenance" in data.files else {}
        )
    arrays.setdefault("cost_locs", arrays["locs"].astype(np.float64))
    missing = [k for k in (*INSTANCE_KEYS, *LABEL_KEYS) if k not in arrays]
    if missing:
        raise ValueError(f"{path}: missing arrays {missing}")
    if checksum is None:
        raise ValueError(f"{path}: no meta_checksum")
    if verify and dataset_checksum(arrays) != checksum:
        raise ValueError(f"{path}: checksum mismatch (file modified or truncated)")
    size = arrays["locs"].shape[0]
    instances = TensorDict(
        {k: torch.from_numpy(np.asarray(arrays[k])) for k in INSTANCE_KEYS}, batch_size=[size]
    )
    acts = arrays["actions"].astype(np.int64)
    actions = [row[:length].tolist() for row, length in zip(acts, arrays["action_length"])]
    return Shard(
        instances=instances,
        actions=actions,
        objective=[float(v) for v in arrays["objective"]],
        cpu_seconds=[float(v) for v in arrays["cpu_seconds"]],
        wall_seconds=[float(v) for v in arrays["wall_seconds"]],
        provenance=provenance,
    )


def list_shards(folder: Path) -> list[Path]:
    """The shard files of ``folder`` in index order."""
    return sorted(Path(folder).glob("shard_*.npz"))


def replay_costs(shard: Shard) -> torch.Tensor:
    """The env's cost of every stored label: the actions replayed through
    :meth:`clrp_rl4co.envs.CLRPEnv.rollout_actions` (which raises on an infeasible action),
    float64 [count]. Equal to ``objective`` up to the env's float32 arithmetic."""
    from clrp_rl4co.envs import CLRPEnv

    if shard.count == 0:
        return torch.zeros(0, dtype=torch.float64)
    env = CLRPEnv(check_solution=False)
    final = env.rollout_actions(shard.solved_instances(), shard.padded_actions())
    return env.cost_parts(final)["total"].double()


def expert_datasets(folder: str | Path, limit: int | None = None, verify: bool = True) -> dict:
    """The labels of every shard of ``folder``, one
    :class:`clrp_rl4co.models.expert_data.ExpertDataset` per instance size (``(customers,
    depots)`` -> dataset, sizes in shard order; a mixed preset's shards hold several sizes).

    Args:
        folder: a preset's labels folder (``datasets/labels/<preset>``).
        limit: keep the first ``limit`` labels in shard order (None: all).
        verify: check each shard's checksum.

    Raises:
        ValueError: the folder holds no labelled instance, or ``limit`` is below 1, naming them.
    """
    from clrp_rl4co.models.expert_data import ExpertDataset

    if limit is not None and int(limit) < 1:
        raise ValueError(f"limit: must be >= 1 or None, got {limit!r}")
    parts: dict[tuple[int, int], list] = {}
    remaining = None if limit is None else int(limit)
    for path in list_shards(Path(folder)):
        shard = read_shard(path, verify=verify)
        if shard.count == 0:
            continue
        take = shard.count if remaining is None else min(shard.count, remaining)
        part = ExpertDataset(shard.solved_instances()[:take], shard.padded_actions()[:take])
        size = (int(part.instances["demand"].shape[-1]),
                int(part.instances["depot_capacity"].shape[-1]))  # fmt: skip
        parts.setdefault(size, []).append(part)
        if remaining is not None:
            remaining -= take
            if remaining == 0:
                break
    if not parts:
        raise ValueError(f"{folder}: no labelled instances (no shard_*.npz with labels)")
    return {size: ExpertDataset.concatenate(group) for size, group in parts.items()}


def expert_dataset(folder: str | Path, limit: int | None = None, verify: bool = True):
    """The labels of every shard of ``folder`` as one
    :class:`clrp_rl4co.models.expert_data.ExpertDataset` (what ``model=imitation`` trains on);
    arguments as :func:`expert_datasets`.

    Raises:
        ValueError: as :func:`expert_datasets`, or the shards hold several instance sizes.
    """
    by_size = expert_datasets(folder, limit, verify)
    if len(by_size) > 1:
        raise ValueError(
            f"{folder}: shards of {sorted(by_size)} (customers, depots); one dataset holds one "
            "instance size"
        )
    return next(iter(by_size.values()))


def labels_charge(folder: str | Path, limit: int | None = None) -> dict[str, float]:
    """What the first ``limit`` labels of ``folder`` (in :func:`expert_dataset`'s order; None:
    all) cost and reach: ``count``, ``cpu_hours`` (the solver's CPU time) and
    ``mean_objective``."""
    count, cpu_seconds, objective = 0, 0.0, 0.0
    for path in list_shards(Path(folder)):
        shard = read_shard(path, verify=False)
        take = shard.count if limit is None else min(shard.count, int(limit) - count)
        count += take
        cpu_seconds += float(sum(shard.cpu_seconds[:take]))
        objective += float(sum(shard.objective[:take]))
        if limit is not None and count >= int(limit):
            break
    return {
        "count": count,
        "cpu_hours": cpu_seconds / 3600.0,
        "mean_objective": objective / count if count else float("nan"),
    }
