"""Random CLRP instances (the DRLHQ synthetic distribution) and seeded ``.npz`` datasets."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from rl4co.envs.common.utils import Generator, get_sampler
from tensordict import TensorDict
from torch.distributions import Uniform

#: Presets of the DRLHQ paper (Miao et al.): customers, depots, depot capacity range and
#: opening-cost range; demand is an integer in {10..19}, vehicle capacity 70, fixed cost 1.
PRESETS: dict[str, dict] = {
    "clrp10": dict(num_loc=10, num_depots=5, depot_capacity=(100, 300), opening_cost=(1, 5)),
    "clrp20": dict(num_loc=20, num_depots=5, depot_capacity=(100, 300), opening_cost=(1, 5)),
    "clrp50": dict(num_loc=50, num_depots=10, depot_capacity=(130, 450), opening_cost=(1, 5)),
    "clrp100": dict(num_loc=100, num_depots=20, depot_capacity=(500, 900), opening_cost=(5, 15)),
    "clrp200": dict(num_loc=200, num_depots=20, depot_capacity=(500, 900), opening_cost=(5, 15)),
    "clrp300": dict(num_loc=300, num_depots=20, depot_capacity=(500, 900), opening_cost=(5, 15)),
    "clrp400": dict(num_loc=400, num_depots=30, depot_capacity=(500, 900), opening_cost=(5, 15)),
    "clrp500": dict(num_loc=500, num_depots=30, depot_capacity=(500, 900), opening_cost=(5, 15)),
}

#: Keys of an instance TensorDict (generator output, dataset file, env input).
INSTANCE_KEYS = (
    "locs",
    "cost_locs",
    "depot_capacity",
    "opening_cost",
    "demand",
    "vehicle_capacity",
    "vehicle_fixed_cost",
    "rounded_costs",
)


class CLRPGenerator(Generator):
    """Generator of random CLRP instances.

    Defaults reproduce the DRLHQ paper's distribution for ``preset`` (default ``"clrp20"``);
    every explicit argument overrides the preset. Customers follow ``loc_distribution`` (any
    RL4CO sampler: ``"uniform"``, ``"cluster"``, ``"mixed"``, ...); depots follow
    ``depot_distribution``, which is uniform by default (the paper's setting), *not* the
    customer distribution.

    Args:
        preset: one of :data:`PRESETS` (``clrp10`` ... ``clrp500``).
        num_loc: number of customers ``N``.
        num_depots: number of candidate depots ``D``.
        min_loc, max_loc: coordinate range (unit square by default).
        loc_distribution, depot_distribution: RL4CO samplers for customers and depots.
        min_demand, max_demand: customer demand is an integer uniform in
            ``{min_demand, ..., max_demand}`` (both inclusive).
        vehicle_capacity: ``q``; vehicle_fixed_cost: ``F`` per route.
        min_depot_capacity, max_depot_capacity: depot capacity ``Q_i`` uniform real in
            ``[min, max)``.
        min_opening_cost, max_opening_cost: opening cost ``O_i`` uniform real in ``[min, max)``.
        tight_capacity: ``None`` or ``(low, high)``: rescale each instance's depot capacities so
            that their total is ``U(low, high)`` times its total demand (e.g. ``(1.05, 1.2)``).

    Returns (``generator(batch_size)``), a TensorDict with:
        locs [B, D+N, 2]: coordinates, depots first (the network input, augmentable);
        cost_locs [B, D+N, 2] float64: the same coordinates, never augmented (the reward's);
        depot_capacity [B, D], opening_cost [B, D], demand [B, N];
        vehicle_capacity [B, 1], vehicle_fixed_cost [B, 1]; rounded_costs [B] (all False).
    """

    def __init__(
        self,
        preset: str | None = "clrp20",
        num_loc: int | None = None,
        num_depots: int | None = None,
        min_loc: float = 0.0,
        max_loc: float = 1.0,
        loc_distribution: int | float | str | type | Callable = Uniform,
        depot_distribution: int | float | str | type | Callable = Uniform,
        min_demand: int = 10,
        max_demand: int = 19,
        vehicle_capacity: float = 70.0,
        vehicle_fixed_cost: float = 1.0,
        min_depot_capacity: float | None = None,
        max_depot_capacity: float | None = None,
        min_opening_cost: float | None = None,
        max_opening_cost: float | None = None,
        tight_capacity: tuple[float, float] | None = None,
        **kwargs,
    ):
        if preset is not None and preset not in PRESETS:
            raise ValueError(f"preset: unknown preset {preset!r}; choose one of {list(PRESETS)}")
        base = PRESETS[preset] if preset is not None else PRESETS["clrp20"]
        self.preset = preset
        self.num_loc = int(num_loc if num_loc is not None else base["num_loc"])
        self.num_depots = int(num_depots if num_depots is not None else base["num_depots"])
        self.min_loc, self.max_loc = float(min_loc), float(max_loc)
        self.min_demand, self.max_demand = int(min_demand), int(max_demand)
        self.vehicle_capacity = float(vehicle_capacity)
        self.vehicle_fixed_cost = float(vehicle_fixed_cost)
        cap, cost = base["depot_capacity"], base["opening_cost"]
        self.min_depot_capacity = float(
            min_depot_capacity if min_depot_capacity is not None else cap[0]
        )
        self.max_depot_capacity = float(
            max_depot_capacity if max_depot_capacity is not None else cap[1]
        )
        self.min_opening_cost = float(min_opening_cost if min_opening_cost is not None else cost[0])
        self.max_opening_cost = float(max_opening_cost if max_opening_cost is not None else cost[1])
        self.tight_capacity = tuple(tight_capacity) if tight_capacity is not None else None
        self._validate()
        self.loc_sampler = kwargs.pop("loc_sampler", None) or get_sampler(
            "loc", loc_distribution, min_loc, max_loc, **kwargs
        )
        self.depot_sampler = kwargs.pop("depot_sampler", None) or get_sampler(
            "depot", depot_distribution, min_loc, max_loc, **kwargs
        )
        super().__init__(**kwargs)

    def _validate(self) -> None:
        checks = [
            ("num_loc", self.num_loc, self.num_loc >= 1),
            ("num_depots", self.num_depots, self.num_depots >= 1),
            ("max_loc", self.max_loc, self.max_loc > self.min_loc),
            ("min_demand", self.min_demand, self.min_demand >= 1),
            ("max_demand", self.max_demand, self.max_demand >= self.min_demand),
            ("vehicle_capacity", self.vehicle_capacity, self.vehicle_capacity >= self.max_demand),
            ("vehicle_fixed_cost", self.vehicle_fixed_cost, self.vehicle_fixed_cost >= 0),
            ("min_depot_capacity", self.min_depot_capacity, self.min_depot_capacity >= 0),
            (
                "max_depot_capacity",
                self.max_depot_capacity,
                self.max_depot_capacity >= self.min_depot_capacity,
            ),
            ("min_opening_cost", self.min_opening_cost, self.min_opening_cost >= 0),
            (
                "max_opening_cost",
                self.max_opening_cost,
                self.max_opening_cost >= self.min_opening_cost,
            ),
        ]
        for name, value, ok in checks:
            if not (ok and np.isfinite(value)):
                raise ValueError(f"{name}: invalid value {value}")
        if self.tight_capacity is not None:
            low, high = self.tight_capacity
            if not (1.0 <= low <= high):
                raise ValueError(
                    f"tight_capacity: need 1 <= low <= high, got {self.tight_capacity}"
                )

    def _generate(self, batch_size) -> TensorDict:
        batch = list(batch_size)
        n, d = self.num_loc, self.num_depots
        depot_locs = self.depot_sampler.sample((*batch, d, 2))
        customer_locs = self.loc_sampler.sample((*batch, n, 2))
        locs = torch.cat([depot_locs, customer_locs], dim=-2).float()
        demand = torch.randint(self.min_demand, self.max_demand + 1, (*batch, n)).float()
        capacity = self.min_depot_capacity + (
            self.max_depot_capacity - self.min_depot_capacity
        ) * torch.rand(*batch, d)
        opening = self.min_opening_cost + (
            self.max_opening_cost - self.min_opening_cost
        ) * torch.rand(*batch, d)
        total_demand = demand.sum(-1, keepdim=True)
        if self.tight_capacity is not None:
            low, high = self.tight_capacity
            ratio = low + (high - low) * torch.rand(*batch, 1)
            capacity = capacity / capacity.sum(-1, keepdim=True) * total_demand * ratio
        short = capacity.sum(-1, keepdim=True) < total_demand
        if short.any():
            raise ValueError(
                "depot_capacity: generated total depot capacity below total demand; raise "
                f"min_depot_capacity (now {self.min_depot_capacity}) or add depots"
            )
        return TensorDict(
            {
                "locs": locs,
                "cost_locs": locs.double(),
                "depot_capacity": capacity,
                "opening_cost": opening,
                "demand": demand,
                "vehicle_capacity": torch.full((*batch, 1), self.vehicle_capacity),
                "vehicle_fixed_cost": torch.full((*batch, 1), self.vehicle_fixed_cost),
                "rounded_costs": torch.zeros(*batch, dtype=torch.bool),
            },
            batch_size=batch,
        )


def dataset_checksum(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over the instance arrays (key names, dtypes, shapes and bytes, keys sorted)."""
    h = hashlib.sha256()
    for key in sorted(arrays):
        arr = np.ascontiguousarray(arrays[key])
        h.update(f"{key}|{arr.dtype.str}|{arr.shape}|".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def generate_dataset(generator: CLRPGenerator, size: int, seed: int) -> TensorDict:
    """``size`` instances drawn with a private, seeded RNG (the global RNG is left untouched)."""
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
