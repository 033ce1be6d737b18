"""Random CLRP instances (the DRLHQ synthetic distribution) and seeded ``.npz`` datasets."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
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

    Args:
        preset: one of :data:`PRESETS` (``clrp10`` ... ``clrp500``): the default ``num_loc``.
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
        self.preset = preset
        default_size = PRESETS[preset if preset is not None else "clrp20"]["num_loc"]
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
