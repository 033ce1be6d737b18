"""Random CLRP instances: the DRLHQ paper's distribution (presets ``clrp10`` ... ``clrp500``
and :func:`size_rule` for any size), and presets beyond it (:func:`register_preset`); the
presets and their registry live in :mod:`.presets`."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable

import numpy as np
import torch
from rl4co.envs.common.utils import Generator, get_sampler
from tensordict import TensorDict
from torch.distributions import Exponential, Normal, Poisson, Uniform

from .instance import instance_tensordict
from .presets import (
    PRESET_SAMPLERS,
    PRESETS,
    RESERVED_NAMES,
    PresetSampler,  # noqa: F401 (this module's public names since presets were split off)
    known_presets,
    preset_sampler_class,
    register_preset,  # noqa: F401
    size_rule,
)

#: Rounds of demand-and-capacity redraws for instances that first-fit decreasing cannot pack
#: (only possible with user-given capacity ranges, demands or ``tight_capacity``).
MAX_REDRAW_ROUNDS = 100


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


def packable(demand: torch.Tensor, capacity: torch.Tensor) -> torch.Tensor:
    """Whether each instance can be served: :func:`ffd_feasible`, with the sure cases decided
    without the packing loop: total capacity at least total demand + D * largest demand (yes,
    see :func:`size_rule`) or below total demand (no).

    Args:
        demand: [..., N] customer demands; capacity: [..., D] depot capacities.

    Returns:
        bool [...].
    """
    total_capacity, total_demand = capacity.sum(-1), demand.sum(-1)
    ok = total_capacity >= total_demand + capacity.shape[-1] * demand.amax(-1)
    unsure = ~ok & (total_capacity >= total_demand)
    if unsure.any():
        ok[unsure] = ffd_feasible(demand[unsure], capacity[unsure])
    return ok


#: Arguments of the paper's distribution that a registered preset's sampler receives
#: (:class:`PresetSampler`); it raises ``ValueError`` for those it replaces when they are given.
DISTRIBUTION_ARGUMENTS = (
    "min_demand",
    "max_demand",
    "vehicle_capacity",
    "vehicle_fixed_cost",
    "min_depot_capacity",
    "max_depot_capacity",
    "min_opening_cost",
    "max_opening_cost",
    "tight_capacity",
    "loc_distribution",
    "depot_distribution",
)


#: Keyword arguments RL4CO's ``get_sampler`` reads for the location samplers
#: (``loc_distribution`` / ``depot_distribution``: ``"normal"``, ``"cluster"``, ...), and
#: ready-made samplers in their place.
SAMPLER_ARGUMENTS = frozenset(
    {
        *(f"{var}_{arg}" for var in ("loc", "depot") for arg in ("mean", "std", "rate")),
        "num_modes",
        "cdist",
        "n_cluster",
        "n_cluster_mix",
        "loc_sampler",
        "depot_sampler",
    }
)


def _takes_any_keyword(distribution) -> bool:
    """Whether RL4CO's ``get_sampler`` calls ``distribution(**kwargs)`` with every extra
    keyword (a callable that is none of the distributions it knows by name)."""
    if isinstance(distribution, (int, float, str)):
        return False
    known = (Uniform, Normal, Exponential, Poisson)
    return callable(distribution) and not any(distribution is d for d in known)


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

    Presets beyond the paper's are plugged in with :func:`register_preset` (a
    :class:`PresetSampler` draws whole instances; e.g. the clrp-rl4co package registers
    ``"mixed"``, a wide training distribution, by its location): ``preset=name`` selects
    one and the keyword named like it carries its options (``mixed=dict(num_loc=(20, 100))``).
    Without ``num_loc`` such a preset may draw ``N`` anew at each call (``draw_num_loc`` is
    True; setting ``num_loc`` in place, as RL4CO's Reptile callback does, then does not fix
    the size: set ``draw_num_loc = False`` too). ``num_loc``, ``min_demand``, ``max_demand``,
    ``vehicle_capacity`` and ``vehicle_fixed_cost`` then hold its largest (smallest demand)
    values, for the env's observation spec.

    Unknown keyword arguments raise ``ValueError`` naming them and the accepted ones: the
    parameters below, the sampler arguments RL4CO's ``get_sampler`` reads
    (:data:`SAMPLER_ARGUMENTS`: ``n_cluster``, ``loc_mean``, ...) and the option keyword of
    each registered preset; with a custom callable ``loc_distribution`` or
    ``depot_distribution`` every extra keyword is passed on to it.

    Args:
        preset: one of :data:`PRESETS` (``clrp10`` ... ``clrp500``): the default ``num_loc``;
            or a registered preset (:func:`known_presets`, see above).
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
        if preset is not None and preset not in known_presets():
            raise ValueError(f"preset: unknown preset {preset!r}; choose one of {known_presets()}")
        options = _check_keywords(preset, kwargs, loc_distribution, depot_distribution)
        self.preset = preset
        #: the registered preset's sampler (:class:`PresetSampler`); None for the paper's
        self.preset_sampler = None
        if preset in PRESET_SAMPLERS:
            given = dict(
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
            self.preset_sampler = preset_sampler_class(preset)(options, **given)
        #: a registered preset without num_loc: N (and D) drawn anew at each call
        self.draw_num_loc = self.preset_sampler is not None and num_loc is None
        default_size = PRESETS[preset if preset in PRESETS else "clrp20"]["num_loc"]
        if self.preset_sampler is not None:  # its largest values (the env's observation spec)
            bounds = self.preset_sampler.bounds(max_loc - min_loc)
            default_size = bounds["num_loc"]
            min_demand, max_demand = bounds["min_demand"], bounds["max_demand"]
            vehicle_capacity = bounds["vehicle_capacity"]
            vehicle_fixed_cost = bounds["vehicle_fixed_cost"]
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

    def explicit_value(self, name: str):
        """The value given for the size-derived attribute ``name`` (``num_depots``,
        ``min_depot_capacity``, ...), or None where it follows :func:`size_rule`."""
        return self.__dict__.get("_" + name)

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

    def _generate(self, batch_size) -> TensorDict:
        self._validate()  # num_loc may have been changed in place since __init__
        if self.preset_sampler is not None:
            return self.preset_sampler.sample(self, list(batch_size))
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
        ok = packable(demand, capacity)
        for _ in range(MAX_REDRAW_ROUNDS):
            if ok.all():
                break
            new_demand = self._draw_demand([int((~ok).sum())])
            new_capacity = self._draw_capacity(new_demand)
            if self.tight_capacity is not None:
                new_capacity = self._tighten(new_capacity, new_demand)
            demand[~ok], capacity[~ok] = new_demand, new_capacity
            ok[~ok] = packable(new_demand, new_capacity)
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


#: Named parameters of :class:`CLRPGenerator`: no registered preset may take one as its name.
_PARAMETERS = frozenset(inspect.signature(CLRPGenerator.__init__).parameters) - {"self", "kwargs"}
RESERVED_NAMES.update(_PARAMETERS)


def _check_keywords(preset: str | None, kwargs: dict, *distributions) -> object:
    """Take the option keyword of ``preset`` out of ``kwargs`` and return its value (None when
    absent); raise ``ValueError`` for another registered preset's options and for an unknown
    keyword (with the accepted ones), unless a distribution takes any keyword."""
    for name in PRESET_SAMPLERS:
        if name != preset and name in kwargs:
            raise ValueError(f"{name}: only read with preset={name!r}, got preset={preset!r}")
    options = kwargs.pop(preset, None) if preset in PRESET_SAMPLERS else None
    unknown = sorted(set(kwargs) - SAMPLER_ARGUMENTS)
    if unknown and not any(_takes_any_keyword(d) for d in distributions):
        accepted = sorted(_PARAMETERS | SAMPLER_ARGUMENTS | set(PRESET_SAMPLERS))
        close = difflib.get_close_matches(unknown[0], accepted, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"{unknown[0]}: unknown generator parameter{hint}; accepted: {', '.join(accepted)}"
        )
    return options
