"""Random CLRP instances (the DRLHQ synthetic distribution) and seeded ``.npz`` datasets."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np
import torch
from rl4co.envs.common.utils import Generator, get_sampler
from tensordict import TensorDict
from torch.distributions import Uniform

#: Presets of the DRLHQ paper (Miao et al.): customers, depots, depot capacity range and
#: opening-cost range; demand is an integer in {10..19}, vehicle capacity 70, fixed cost 1.
#: :func:`size_rule` gives the same depots and ranges at each preset's ``num_loc``.
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


def instance_tensordict(
    locs,
    depot_capacity,
    opening_cost,
    demand,
    vehicle_capacity,
    vehicle_fixed_cost,
    cost_locs=None,
    rounded_costs=None,
    device=None,
) -> TensorDict:
    """An instance TensorDict (the keys of :data:`INSTANCE_KEYS`), as the generator returns it
    and the env reads it; use it to build batches of instances from any other source.

    Args:
        locs: [..., D+N, 2] coordinates, depots first (the network input).
        depot_capacity, opening_cost: [..., D]; demand: [..., N].
        vehicle_capacity, vehicle_fixed_cost: a number (every instance) or one per instance
            ([...] or [..., 1]).
        cost_locs: [..., D+N, 2] coordinates the cost is computed from (default: ``locs``).
        rounded_costs: bool, or [...] bools (default False): ``ceil(100 d)`` arc costs.
        device: default: ``locs``'s device (CPU for arrays).

    Any array-like is accepted. ``cost_locs`` is float64, ``rounded_costs`` bool and every
    other entry float32; ``vehicle_capacity`` and ``vehicle_fixed_cost`` are [..., 1]. The
    batch shape ``...`` is ``depot_capacity``'s; nothing is validated here (the env's reset
    does it, :func:`check_instance_validity`).
    """
    if device is None:
        device = locs.device if isinstance(locs, torch.Tensor) else "cpu"

    def tensor(value, dtype=torch.float32):
        return torch.as_tensor(value, dtype=dtype, device=device)

    capacity = tensor(depot_capacity)
    batch = capacity.shape[:-1]

    def per_instance(value, dtype=torch.float32):
        """[...] values from a number or one value per instance ([...] or [..., 1])."""
        value = tensor(value, dtype)
        return value.expand(batch).clone() if value.dim() == 0 else value.reshape(batch)

    locs = tensor(locs)
    return TensorDict(
        {
            "locs": locs,
            "cost_locs": locs.double() if cost_locs is None else tensor(cost_locs, torch.float64),
            "depot_capacity": capacity,
            "opening_cost": tensor(opening_cost),
            "demand": tensor(demand),
            "vehicle_capacity": per_instance(vehicle_capacity)[..., None],
            "vehicle_fixed_cost": per_instance(vehicle_fixed_cost)[..., None],
            "rounded_costs": per_instance(
                False if rounded_costs is None else rounded_costs, torch.bool
            ),
        },
        batch_size=batch,
        device=device,
    )


#: Rounds of demand-and-capacity redraws for instances that first-fit decreasing cannot pack
#: (only possible with user-given capacity ranges, demands or ``tight_capacity``).
MAX_REDRAW_ROUNDS = 100


def size_rule(num_loc: int) -> dict:
    """Depots, depot-capacity range and opening-cost range for ``num_loc`` customers.

    ==================  ==========================  ==============  ============
    customers ``N``     depots ``D``                capacity        opening cost
    ==================  ==========================  ==============  ============
    ``N <= 20``         5                           ``[100, 300)``  ``[1, 5)``
    ``20 < N <= 50``    10                          ``[130, 450)``  ``[1, 5)``
    ``50 < N <= 300``   20                          ``[500, 900)``  ``[5, 15)``
    ``N > 300``         ``max(30, ceil(3N / 50))``  ``[500, 900)``  ``[5, 15)``
    ==================  ==========================  ==============  ============

    It gives every row of :data:`PRESETS` at the preset's ``N`` (10, 20, 50, ..., 500), 30
    depots up to ``N = 500`` and 60 at ``N = 1000``.

    Feasible by construction with the default demands ``{10..19}`` (``M = 19``): first-fit (in
    any order, so first-fit decreasing too) fails on a customer of demand ``s <= M`` only if
    every depot has less than ``s`` left, i.e. only if total capacity ``C < T + (D - 1) s`` for
    total demand ``T <= N M``. So it always succeeds when ``C >= (N + D) M``, and the rule's
    smallest total capacity ``D * min_capacity`` satisfies that for every ``N``:

    * ``N <= 20``: ``5 * 100 = 500 >= (20 + 5) * 19 = 475``;
    * ``N <= 50``: ``10 * 130 = 1300 >= (50 + 10) * 19 = 1140``;
    * ``N <= 300``: ``20 * 500 = 10000 >= (300 + 20) * 19 = 6080``;
    * ``N > 300``: ``500 D >= 19 (N + D)`` iff ``D >= 19 N / 481 ~ 0.040 N``, and
      ``D >= 3N / 50 = 0.06 N``.

    A vehicle (capacity 70) carries any single customer, so every instance has a solution.
    """
    n = int(num_loc)
    if n < 1:
        raise ValueError(f"num_loc: invalid value {num_loc}")
    if n <= 20:
        return dict(num_depots=5, depot_capacity=(100.0, 300.0), opening_cost=(1.0, 5.0))
    if n <= 50:
        return dict(num_depots=10, depot_capacity=(130.0, 450.0), opening_cost=(1.0, 5.0))
    depots = 20 if n <= 300 else max(30, math.ceil(3 * n / 50))
    return dict(num_depots=depots, depot_capacity=(500.0, 900.0), opening_cost=(5.0, 15.0))


def ffd_feasible(demand: torch.Tensor, capacity: torch.Tensor) -> torch.Tensor:
    """Whether first-fit decreasing packs each instance's demands into its depots.

    Customers are taken by decreasing demand; each goes to the first depot (in index order)
    with enough capacity left. Vectorised over the batch (one step per customer).

    Args:
        demand: [..., N] customer demands; capacity: [..., D] depot capacities.

    Returns:
        bool [...]: True where every customer was placed.
    """
    batch = demand.shape[:-1]
    dem = demand.reshape(-1, demand.shape[-1]).double()
    remaining = capacity.reshape(-1, capacity.shape[-1]).double().clone()
    ordered = dem.sort(dim=-1, descending=True).values
    rows = torch.arange(dem.shape[0], device=dem.device)
    ok = torch.ones(dem.shape[0], dtype=torch.bool, device=dem.device)
    for j in range(ordered.shape[-1]):
        item = ordered[:, j]
        fits = remaining >= item[:, None]
        placed = fits.any(-1)
        first = fits.to(torch.uint8).argmax(-1)  # first depot that fits (0 if none)
        remaining[rows, first] -= torch.where(placed, item, torch.zeros_like(item))
        ok &= placed
    return ok.reshape(batch)


class _RuleDefault:
    """A generator attribute that is the user's value when set (not None) and otherwise
    :func:`size_rule`'s entry ``key`` (item ``index`` of a range) for the current ``num_loc``."""

    def __init__(self, key: str, index: int | None, cast: type = float):
        self.key, self.index, self.cast = key, index, cast

    def __set_name__(self, owner, name: str) -> None:
        self.attr = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        value = obj.__dict__.get(self.attr)
        if value is not None:
            return value
        rule = size_rule(obj.num_loc)[self.key]
        return rule if self.index is None else rule[self.index]

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.attr] = None if value is None else self.cast(value)


class CLRPGenerator(Generator):
    """Generator of random CLRP instances.

    The size is ``num_loc`` (any ``N >= 1``; default: the preset's). Unless given explicitly,
    ``num_depots`` and the depot-capacity and opening-cost ranges follow :func:`size_rule`,
    evaluated from the *current* ``num_loc`` each time instances are drawn, so changing
    ``generator.num_loc`` in place (as RL4CO's Reptile callback does) changes them too (the
    table of :func:`size_rule`: 5 depots up to ``N = 20``, 10 up to 50, 20 up to 300, then
    ``max(30, ceil(3N / 50))``).

    The rule reproduces the DRLHQ paper's presets (:data:`PRESETS`) at ``N`` = 10, 20, 50,
    100, 200, 300, 400, 500, so ``preset="clrp50"`` and ``num_loc=50`` are the same generator.

    Precedence: an explicit argument (``num_depots``, ``min_depot_capacity``, ...) always wins
    over the rule; ``num_loc`` wins over ``preset``, which only names the default size
    (``CLRPGenerator()`` is clrp20). Customers follow ``loc_distribution`` (any RL4CO sampler:
    ``"uniform"``, ``"cluster"``, ``"mixed"``, ...); depots follow ``depot_distribution``,
    which is uniform by default (the paper's setting), *not* the customer distribution.

    Every instance returned can be served: first-fit decreasing packs its demands into its
    depot capacities (always true under the rule with the default demands, see
    :func:`size_rule`). With user-given ranges or ``tight_capacity`` it can fail: then the
    demands and depot capacities of those instances only are redrawn (rejection sampling, so
    instances follow the requested distribution conditioned on being packable; a batch that
    needs no redraw consumes the random numbers exactly as a plain draw). If some still fail
    after :data:`MAX_REDRAW_ROUNDS` rounds, ``ValueError`` names the parameters to change.

    Preset ``"mixed"`` is not the paper's: every instance is drawn from the ranges of
    :class:`MixedRanges` (``mixed=dict(...)`` overrides them): vehicle capacity, demand
    range, fixed and opening costs, depot capacities from tight to uncapacitated, uniform /
    clustered / mixed layouts, and (unless ``num_loc`` is given) the number of customers
    ``N`` (20-200) and depots drawn anew at each call. A call's instances share ``N`` and
    ``D`` (one TensorDict); RL4CO draws an epoch's training data in one call, so ``N``
    changes per epoch: use small epochs (``train_data_size`` a few batches) to vary it
    often. While ``draw_num_loc`` is True (no ``num_loc`` given), setting ``num_loc`` in
    place (RL4CO's Reptile callback) does not fix the size: set ``draw_num_loc = False`` too.
    The scalar demand, capacity and cost arguments and the samplers are then not
    used (giving one raises ``ValueError``); ``num_loc``, ``min_demand``, ``max_demand``,
    ``vehicle_capacity`` and ``vehicle_fixed_cost`` hold the ranges' largest (smallest
    demand) values, for the env's observation spec.

    Args:
        preset: one of :data:`PRESETS` (``clrp10`` ... ``clrp500``): the default ``num_loc``;
            or ``"mixed"`` (see above).
        num_loc: number of customers ``N`` (wins over ``preset``).
        num_depots: number of candidate depots ``D`` (default: :func:`size_rule`).
        min_loc, max_loc: coordinate range (unit square by default).
        loc_distribution, depot_distribution: RL4CO samplers for customers and depots.
        min_demand, max_demand: customer demand is an integer uniform in
            ``{min_demand, ..., max_demand}`` (both inclusive).
        vehicle_capacity: ``q``; vehicle_fixed_cost: ``F`` per route.
        min_depot_capacity, max_depot_capacity: depot capacity ``Q_i`` uniform real in
            ``[min, max)`` (default: :func:`size_rule`).
        min_opening_cost, max_opening_cost: opening cost ``O_i`` uniform real in ``[min, max)``
            (default: :func:`size_rule`).
        tight_capacity: ``None`` or ``(low, high)``: rescale each instance's depot capacities so
            that their total is ``U(low, high)`` times its total demand (e.g. ``(1.05, 1.2)``).
        mixed: preset ``"mixed"`` only: a :class:`MixedRanges` or a dict of its fields.

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
        mixed: dict | MixedRanges | None = None,
        **kwargs,
    ):
        if preset is not None and preset not in PRESETS and preset != "mixed":
            raise ValueError(
                f"preset: unknown preset {preset!r}; choose one of {[*PRESETS, 'mixed']}"
            )
        self.preset = preset
        self.mixed = mixed_ranges(
            preset,
            mixed,
            min_demand=min_demand,
            max_demand=max_demand,
            vehicle_capacity=vehicle_capacity,
            vehicle_fixed_cost=vehicle_fixed_cost,
            min_depot_capacity=min_depot_capacity,
            max_depot_capacity=max_depot_capacity,
            min_opening_cost=min_opening_cost,
            max_opening_cost=max_opening_cost,
            tight_capacity=tight_capacity,
            loc_distribution=loc_distribution,
            depot_distribution=depot_distribution,
        )
        #: preset "mixed" without num_loc: N (and D) drawn anew at each call
        self.draw_num_loc = self.mixed is not None and num_loc is None
        default_size = PRESETS[preset if preset in PRESETS else "clrp20"]["num_loc"]
        if self.mixed is not None:  # the ranges' largest values (the env's observation spec)
            default_size = self.mixed.num_loc[1]
            min_demand, max_demand = self.mixed.demand_bounds()
            vehicle_capacity = self.mixed.vehicle_capacity_bound()
            vehicle_fixed_cost = self.mixed.fixed_cost[1] * (max_loc - min_loc)
        self.num_loc = int(num_loc if num_loc is not None else default_size)
        # None: follow size_rule(self.num_loc) at draw time; a value: the user's, always wins
        self.num_depots = num_depots
        self.min_depot_capacity = min_depot_capacity
        self.max_depot_capacity = max_depot_capacity
        self.min_opening_cost = min_opening_cost
        self.max_opening_cost = max_opening_cost
        self.min_loc, self.max_loc = float(min_loc), float(max_loc)
        self.min_demand, self.max_demand = int(min_demand), int(max_demand)
        self.vehicle_capacity = float(vehicle_capacity)
        self.vehicle_fixed_cost = float(vehicle_fixed_cost)
        self.tight_capacity = tuple(tight_capacity) if tight_capacity is not None else None
        self._validate()
        self.loc_sampler = kwargs.pop("loc_sampler", None) or get_sampler(
            "loc", loc_distribution, min_loc, max_loc, **kwargs
        )
        self.depot_sampler = kwargs.pop("depot_sampler", None) or get_sampler(
            "depot", depot_distribution, min_loc, max_loc, **kwargs
        )
        super().__init__(**kwargs)

    # size-derived values: the user's if given (not None), else size_rule(self.num_loc)
    num_depots = _RuleDefault("num_depots", None, int)
    min_depot_capacity = _RuleDefault("depot_capacity", 0)
    max_depot_capacity = _RuleDefault("depot_capacity", 1)
    min_opening_cost = _RuleDefault("opening_cost", 0)
    max_opening_cost = _RuleDefault("opening_cost", 1)

    def _validate(self) -> None:
        checks = [
            ("num_loc", self.num_loc, self.num_loc >= 1),
            ("num_depots", self.num_depots, self.num_depots >= 1),
            ("min_loc", self.min_loc, True),
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

    def _draw_demand(self, batch: list[int]) -> torch.Tensor:
        shape = (*batch, int(self.num_loc))
        return torch.randint(self.min_demand, self.max_demand + 1, shape).float()

    def _draw_capacity(self, demand: torch.Tensor) -> torch.Tensor:
        """Depot capacities [k, D] for the instances of ``demand`` [k, N]."""
        low, high = self.min_depot_capacity, self.max_depot_capacity
        return low + (high - low) * torch.rand(*demand.shape[:-1], self.num_depots)

    def _tighten(self, capacity: torch.Tensor, demand: torch.Tensor) -> torch.Tensor:
        low, high = self.tight_capacity
        ratio = low + (high - low) * torch.rand(*demand.shape[:-1], 1)
        total_demand = demand.sum(-1, keepdim=True)
        return capacity / capacity.sum(-1, keepdim=True) * total_demand * ratio

    def _packable(self, demand: torch.Tensor, capacity: torch.Tensor) -> torch.Tensor:
        """First-fit-decreasing feasibility; the sure cases skip the packing loop: total
        capacity at least total demand + D * largest demand (yes, see :func:`size_rule`) or
        below total demand (no)."""
        total_capacity, total_demand = capacity.sum(-1), demand.sum(-1)
        ok = total_capacity >= total_demand + capacity.shape[-1] * demand.amax(-1)
        unsure = ~ok & (total_capacity >= total_demand)
        if unsure.any():
            ok[unsure] = ffd_feasible(demand[unsure], capacity[unsure])
        return ok

    def _generate(self, batch_size) -> TensorDict:
        self._validate()  # num_loc may have been changed in place since __init__
        if self.mixed is not None:
            return _generate_mixed(self, list(batch_size))
        batch = list(batch_size)
        n, d = int(self.num_loc), self.num_depots
        depot_locs = self.depot_sampler.sample((*batch, d, 2))
        customer_locs = self.loc_sampler.sample((*batch, n, 2))
        locs = torch.cat([depot_locs, customer_locs], dim=-2).float()
        demand = self._draw_demand(batch)
        capacity = self._draw_capacity(demand)
        opening = self.min_opening_cost + (
            self.max_opening_cost - self.min_opening_cost
        ) * torch.rand(*batch, d)
        if self.tight_capacity is not None:
            capacity = self._tighten(capacity, demand)
        # redraw demand and capacity of (only) the instances that cannot be packed; nothing
        # is drawn when all can, so such batches keep their random numbers (and checksums)
        ok = self._packable(demand, capacity)
        for _ in range(MAX_REDRAW_ROUNDS):
            if ok.all():
                break
            new_demand = self._draw_demand([int((~ok).sum())])
            new_capacity = self._draw_capacity(new_demand)
            if self.tight_capacity is not None:
                new_capacity = self._tighten(new_capacity, new_demand)
            demand[~ok], capacity[~ok] = new_demand, new_capacity
            ok[~ok] = self._packable(new_demand, new_capacity)
        if not ok.all():
            raise ValueError(
                f"depot_capacity: {int((~ok).sum())} of {ok.numel()} instances cannot be "
                f"served (first-fit decreasing fails) after {MAX_REDRAW_ROUNDS} rounds of "
                f"redraws with num_loc={n}, num_depots={d}, min_depot_capacity="
                f"{self.min_depot_capacity}, max_depot_capacity={self.max_depot_capacity}, "
                f"demand in {{{self.min_demand}..{self.max_demand}}}, tight_capacity="
                f"{self.tight_capacity}; raise min_depot_capacity or tight_capacity's low end, "
                "or add depots"
            )
        return instance_tensordict(
            locs, capacity, opening, demand, self.vehicle_capacity, self.vehicle_fixed_cost
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


# ------------------------------------------------------------------------- preset "mixed"
#: Customer layouts of preset ``"mixed"``: every customer uniform; every customer in Gaussian
#: clusters; each customer clustered with probability 1/2, else uniform.
MIXED_LAYOUTS = ("uniform", "cluster", "mixed")


@dataclass(frozen=True)
class MixedRanges:
    """The ranges of ``CLRPGenerator(preset="mixed")``: a training distribution that covers
    instance classes beyond the DRLHQ paper's (other vehicle capacities, fixed and opening
    costs, depot capacities from tight to uncapacitated, clustered layouts, 20-200 customers).

    Per generator call (all instances of a batch have the same shape, RL4CO's batches):

    * ``N``: integer uniform in ``num_loc`` (unless the generator's ``num_loc`` is given);
    * ``D``: the generator's ``num_depots`` if given, else integer uniform in ``num_depots``,
      else in :func:`mixed_num_depots` ``(N)`` (3-5 depots at ``N = 20``, 5-20 at 100,
      10-20 at 200).

    Per instance (``L = max_loc - min_loc`` is the side of the square, the distance unit):

    * layout: one of :data:`MIXED_LAYOUTS` with probabilities ``layouts`` (weights); clusters:
      ``k`` integer uniform in ``num_clusters`` centres uniform in the square's middle 80 %,
      each with its standard deviation ``U(cluster_std) x L``; a point outside the square is
      redrawn (never clipped). Depots are uniform in the square;
    * demand: integer uniform in ``{a, ..., a + w}`` with ``a`` integer uniform in
      ``demand_low`` and ``w`` in ``demand_width``;
    * vehicle capacity ``q = ceil(r x (a + w / 2))``, ``r`` log-uniform in
      ``customers_per_route`` (about ``r`` customers fill a vehicle; ``r >= 2`` makes every
      demand fit, ``q >= a + w``);
    * fixed cost ``F``: 0 with probability ``zero_fixed_cost``, else log-uniform in
      ``fixed_cost x L``;
    * opening costs ``O_i = o (1 + s u_i)``: ``o`` log-uniform in ``opening_cost x L``,
      ``s = 0`` (every depot costs the same, as in Tuzun-Burke-like classes) with probability
      ``equal_opening_cost``, else uniform in ``opening_cost_spread``; ``u_i`` uniform in
      ``[-1, 1]``;
    * depot capacities, with ``T`` the instance's total demand: with probability
      ``uncapacitated`` every ``Q_i = kappa T`` (``kappa`` uniform in ``uncapacitated_factor``:
      each depot alone can serve everyone); else ``Q_i = rho T w_i / sum_k w_k`` with ``rho``
      log-uniform in ``capacity_ratio`` (total capacity / total demand; 1.05 is tight) and
      ``w_i`` uniform in ``capacity_weight``. Capacities that first-fit decreasing cannot fill
      with the demands are redrawn (``rho`` and ``w``; rejection sampling, so the instance
      follows the ranges conditioned on being servable).

    The defaults cover the paper's presets (``q / mean demand`` 4.8, ``F / L`` 1,
    ``O_i / L`` 1-15, total capacity / demand 3.4-9.6), Tuzun-Burke-like classes (``r``
    about 10, ``F / L`` 0.1, ``O / L`` 1, each ``Q_i = 2T``, clustered) and classes without
    fixed cost. Ranges are validated on construction (``ValueError`` naming the field).
    """

    num_loc: tuple[int, int] = (20, 200)
    num_depots: tuple[int, int] | None = None
    layouts: dict = field(default_factory=lambda: {"uniform": 1.0, "cluster": 1.0, "mixed": 1.0})
    num_clusters: tuple[int, int] = (2, 8)
    cluster_std: tuple[float, float] = (0.03, 0.10)
    demand_low: tuple[int, int] = (1, 20)
    demand_width: tuple[int, int] = (0, 30)
    customers_per_route: tuple[float, float] = (3.0, 16.0)
    fixed_cost: tuple[float, float] = (0.01, 3.0)
    zero_fixed_cost: float = 0.2
    opening_cost: tuple[float, float] = (0.1, 30.0)
    opening_cost_spread: tuple[float, float] = (0.0, 0.5)
    equal_opening_cost: float = 0.15
    capacity_ratio: tuple[float, float] = (1.05, 10.0)
    capacity_weight: tuple[float, float] = (0.5, 1.5)
    uncapacitated: float = 0.25
    uncapacitated_factor: tuple[float, float] = (1.0, 3.0)

    def __post_init__(self):
        def bad(name: str, rule: str):
            return ValueError(f"mixed.{name}: need {rule}, got {getattr(self, name)!r}")

        integer_ranges = {
            "num_loc": 1,
            "num_depots": 1,
            "num_clusters": 1,
            "demand_low": 1,
            "demand_width": 0,
        }
        real_ranges = {  # name: (smallest low, low may equal it, largest high or None)
            "cluster_std": (0.0, False, None),
            "customers_per_route": (2.0, True, None),
            "fixed_cost": (0.0, False, None),
            "opening_cost": (0.0, False, None),
            "opening_cost_spread": (0.0, True, 1.0),
            "capacity_ratio": (1.0, True, None),
            "capacity_weight": (0.0, False, None),
            "uncapacitated_factor": (1.0, True, None),
        }
        for name in (*integer_ranges, *real_ranges):
            value = getattr(self, name)
            if value is None and name == "num_depots":
                continue
            try:
                low, high = (float(v) for v in value)
            except (TypeError, ValueError):
                raise bad(name, "a pair (low, high) of numbers") from None
            if name in integer_ranges:
                smallest = integer_ranges[name]
                if not (low == int(low) and high == int(high) and smallest <= low <= high):
                    raise bad(name, f"integers {smallest} <= low <= high")
                object.__setattr__(self, name, (int(low), int(high)))
                continue
            smallest, closed, largest = real_ranges[name]
            ok = math.isfinite(low) and math.isfinite(high) and low <= high
            ok = ok and (low >= smallest if closed else low > smallest)
            ok = ok and (largest is None or high <= largest)
            if not ok:
                rule = f"finite {smallest} {'<=' if closed else '<'} low <= high"
                raise bad(name, rule + ("" if largest is None else f" <= {largest}"))
            object.__setattr__(self, name, (low, high))
        for name in ("zero_fixed_cost", "equal_opening_cost", "uncapacitated"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
                raise bad(name, "a probability in [0, 1]")
        layouts = dict(self.layouts)
        unknown = set(layouts) - set(MIXED_LAYOUTS)
        if unknown:
            raise bad("layouts", f"keys among {MIXED_LAYOUTS} (unknown {sorted(unknown)})")
        weights = [layouts.get(k, 0.0) for k in MIXED_LAYOUTS]
        if not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
            raise bad("layouts", "finite non-negative weights with a positive sum")
        object.__setattr__(self, "layouts", dict(zip(MIXED_LAYOUTS, map(float, weights))))

    def demand_bounds(self) -> tuple[int, int]:
        """The smallest and largest demand the ranges allow."""
        return self.demand_low[0], self.demand_low[1] + self.demand_width[1]

    def vehicle_capacity_bound(self) -> float:
        """The largest vehicle capacity the ranges allow."""
        largest_mean = self.demand_low[1] + self.demand_width[1] / 2
        return float(math.ceil(self.customers_per_route[1] * largest_mean))


def mixed_num_depots(num_loc: int) -> tuple[int, int]:
    """Default range of depots for ``N`` customers under preset ``"mixed"``:
    ``low = max(3, ceil(N / 20))``, ``high = max(low, min(20, max(5, ceil(N / 5))))``."""
    low = max(3, math.ceil(num_loc / 20))
    return low, max(low, min(20, max(5, math.ceil(num_loc / 5))))


#: Constructor defaults that preset ``"mixed"`` replaces by its ranges (giving another value
#: with the preset is an error: it would not be used).
_MIXED_REPLACES = dict(
    min_demand=10,
    max_demand=19,
    vehicle_capacity=70.0,
    vehicle_fixed_cost=1.0,
    min_depot_capacity=None,
    max_depot_capacity=None,
    min_opening_cost=None,
    max_opening_cost=None,
    tight_capacity=None,
    loc_distribution=Uniform,
    depot_distribution=Uniform,
)


def mixed_ranges(
    preset: str | None, mixed: dict | MixedRanges | None, **given
) -> MixedRanges | None:
    """The :class:`MixedRanges` of a generator (None unless ``preset == "mixed"``).

    ``given`` are the generator's constructor arguments that the preset replaces
    (:data:`_MIXED_REPLACES`); any of them away from its default raises ``ValueError`` naming
    it, as does ``mixed`` without the preset or with unknown keys.
    """
    if preset != "mixed":
        if mixed is not None:
            raise ValueError(f"mixed: only read with preset='mixed', got preset={preset!r}")
        return None
    for name, value in given.items():
        default = _MIXED_REPLACES[name]
        if value is not default and value != default:
            raise ValueError(
                f"{name}: not used by preset='mixed' (got {value!r}); set its range in "
                "mixed=dict(...) (MixedRanges)"
            )
    if isinstance(mixed, MixedRanges):
        return mixed
    known = {f.name for f in fields(MixedRanges)}
    unknown = set(mixed or {}) - known
    if unknown:
        raise ValueError(f"mixed: unknown keys {sorted(unknown)}; MixedRanges has {sorted(known)}")
    return MixedRanges(**(mixed or {}))


def _randint(low: int, high: int, shape=()) -> torch.Tensor:
    """Integers uniform in ``{low, ..., high}`` (both inclusive)."""
    return torch.randint(int(low), int(high) + 1, shape)


def _uniform(bounds: tuple[float, float], shape) -> torch.Tensor:
    low, high = bounds
    return low + (high - low) * torch.rand(shape)


def _log_uniform(bounds: tuple[float, float], shape) -> torch.Tensor:
    low, high = bounds
    return torch.exp(math.log(low) + (math.log(high) - math.log(low)) * torch.rand(shape))


def _clustered_unit(ranges: MixedRanges, b: int, n: int) -> torch.Tensor:
    """[b, n, 2] points in the unit square around ``k`` Gaussian centres per instance."""
    kmax = ranges.num_clusters[1]
    k = _randint(*ranges.num_clusters, (b, 1))
    centres = 0.1 + 0.8 * torch.rand(b, kmax, 2)
    std = _uniform(ranges.cluster_std, (b, kmax))
    which = (torch.rand(b, n) * k).long()  # uniform in {0, ..., k - 1}
    mean = centres.gather(1, which[..., None].expand(-1, -1, 2))
    sigma = std.gather(1, which)[..., None]
    points = mean + sigma * torch.randn(b, n, 2)
    outside = ((points < 0) | (points > 1)).any(-1)
    while outside.any():  # rejection: redraw the points outside, never clip
        count = int(outside.sum())
        points[outside] = mean[outside] + sigma[outside] * torch.randn(count, 2)
        outside = ((points < 0) | (points > 1)).any(-1)
    return points


def _mixed_capacity(ranges: MixedRanges, total: torch.Tensor, d: int) -> torch.Tensor:
    """Depot capacities [b, D] for total demands ``total`` [b] (see :class:`MixedRanges`)."""
    b = total.shape[0]
    uncapacitated = torch.rand(b, 1) < ranges.uncapacitated
    kappa = _uniform(ranges.uncapacitated_factor, (b, 1))
    rho = _log_uniform(ranges.capacity_ratio, (b, 1))
    weight = _uniform(ranges.capacity_weight, (b, d))
    tight = rho * total[:, None] * weight / weight.sum(-1, keepdim=True)
    return torch.where(uncapacitated, (kappa * total[:, None]).expand(-1, d), tight)


def _generate_mixed(gen: CLRPGenerator, batch: list[int]) -> TensorDict:
    """One batch of preset ``"mixed"`` (the draws of :class:`MixedRanges`)."""
    ranges = gen.mixed
    b = math.prod(batch)
    n = int(_randint(*ranges.num_loc)) if gen.draw_num_loc else int(gen.num_loc)
    if gen.__dict__.get("_num_depots") is not None:
        d = int(gen.num_depots)
    else:
        d = int(_randint(*(ranges.num_depots or mixed_num_depots(n))))
    low, side = gen.min_loc, gen.max_loc - gen.min_loc
    # layout: 0 uniform, 1 cluster, 2 mixed (each customer clustered with probability 1/2)
    weights = torch.tensor([ranges.layouts[k] for k in MIXED_LAYOUTS])
    layout = torch.multinomial(weights, b, replacement=True)[:, None]
    depots = torch.rand(b, d, 2)
    uniform = torch.rand(b, n, 2)
    clustered = _clustered_unit(ranges, b, n)
    pick = (layout == 1) | ((layout == 2) & (torch.rand(b, n) < 0.5))
    customers = torch.where(pick[..., None], clustered, uniform)
    locs = low + side * torch.cat([depots, customers], dim=1)
    # demand, vehicle capacity, costs
    first = _randint(*ranges.demand_low, (b, 1))
    width = _randint(*ranges.demand_width, (b, 1))
    demand = (first + (torch.rand(b, n) * (width + 1)).long()).float()
    route = _log_uniform(ranges.customers_per_route, (b,))
    q = torch.ceil(route * (first[:, 0] + width[:, 0] / 2))
    fixed = _log_uniform(ranges.fixed_cost, (b,)) * side
    fixed = torch.where(torch.rand(b) < ranges.zero_fixed_cost, 0.0, fixed)
    spread = _uniform(ranges.opening_cost_spread, (b, 1))
    spread = torch.where(torch.rand(b, 1) < ranges.equal_opening_cost, 0.0, spread)
    opening = _log_uniform(ranges.opening_cost, (b, 1)) * side
    opening = opening * (1 + spread * (2 * torch.rand(b, d) - 1))
    # depot capacities, redrawn where first-fit decreasing cannot serve the demands
    total = demand.sum(-1)
    capacity = _mixed_capacity(ranges, total, d)
    ok = gen._packable(demand, capacity)
    for _ in range(MAX_REDRAW_ROUNDS):
        if ok.all():
            break
        capacity[~ok] = _mixed_capacity(ranges, total[~ok], d)
        ok[~ok] = gen._packable(demand[~ok], capacity[~ok])
    if not ok.all():
        raise ValueError(
            f"mixed.capacity_ratio: {int((~ok).sum())} of {b} instances cannot be served "
            f"(first-fit decreasing fails) after {MAX_REDRAW_ROUNDS} rounds of capacity "
            f"redraws with N={n}, D={d}, capacity_ratio={ranges.capacity_ratio}; raise its "
            "low end or capacity_weight's, or use fewer depots"
        )
    return instance_tensordict(
        locs.reshape(*batch, d + n, 2),
        capacity.reshape(*batch, d),
        opening.reshape(*batch, d),
        demand.reshape(*batch, n),
        q.reshape(*batch),
        fixed.reshape(*batch),
    )
