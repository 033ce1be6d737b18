"""Preset ``"mixed"`` of :class:`~clrp_rl4co.envs.clrp.generator.CLRPGenerator`: a training
distribution wider than the DRLHQ paper's, registered by its location in
:mod:`clrp_rl4co.envs` (this module is imported when a generator first selects the preset).

Every instance is drawn from the ranges of :class:`MixedRanges` (``mixed=dict(...)`` overrides
them): vehicle capacity, demand range, fixed and opening costs, depot capacities from tight to
uncapacitated, uniform / clustered / mixed layouts, and (unless ``num_loc`` is given) the
number of customers ``N`` (20-200) and depots drawn anew at each call. A call's instances
share ``N`` and ``D`` (one TensorDict); RL4CO draws an epoch's training data in one call, so
``N`` changes per epoch: use small epochs (``train_data_size`` a few batches) to vary it
often. While ``draw_num_loc`` is True (no ``num_loc`` given), setting ``num_loc`` in place
(RL4CO's Reptile callback) does not fix the size: set ``draw_num_loc = False`` too. The
scalar demand, capacity and cost arguments and the samplers of the generator are not used
(giving one raises ``ValueError``); ``num_loc``, ``min_demand``, ``max_demand``,
``vehicle_capacity`` and ``vehicle_fixed_cost`` hold the ranges' largest (smallest demand)
values, for the env's observation spec.

From Python::

    CLRPEnv(generator_params={"preset": "mixed", "mixed": {"num_loc": (20, 100)}})

and from the training entry point (Hydra)::

    python run.py model=drlhqcf env.generator_params.preset=mixed \\
        '+env.generator_params.mixed={num_loc:[20,100]}'

The env folder (``clrp_rl4co/envs/clrp/``, RL4CO's ``rl4co/envs/routing/clrp/``) knows only
the paper's presets; ``"mixed"`` is plugged in through its preset hook
(:func:`~clrp_rl4co.envs.clrp.generator.register_preset`, in ``clrp_rl4co/envs/__init__.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

import torch
from tensordict import TensorDict
from torch.distributions import Uniform

from .envs.clrp.generator import (
    MAX_REDRAW_ROUNDS,
    CLRPGenerator,
    PresetSampler,
    packable,
)
from .envs.clrp.instance import instance_tensordict

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


def mixed_ranges(mixed: Mapping | MixedRanges | None, **given) -> MixedRanges:
    """The :class:`MixedRanges` of ``CLRPGenerator(preset="mixed", mixed=mixed)``.

    ``given`` are the generator's constructor arguments that the preset replaces
    (:data:`_MIXED_REPLACES`); any of them away from its default raises ``ValueError`` naming
    it, as do unknown keys of ``mixed``.
    """
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


def _generate_mixed(ranges: MixedRanges, gen: CLRPGenerator, batch: list[int]) -> TensorDict:
    """One batch of preset ``"mixed"`` (the draws of :class:`MixedRanges`) for ``gen``."""
    b = math.prod(batch)
    n = int(_randint(*ranges.num_loc)) if gen.draw_num_loc else int(gen.num_loc)
    if gen.explicit_value("num_depots") is not None:
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
    ok = packable(demand, capacity)
    for _ in range(MAX_REDRAW_ROUNDS):
        if ok.all():
            break
        capacity[~ok] = _mixed_capacity(ranges, total[~ok], d)
        ok[~ok] = packable(demand[~ok], capacity[~ok])
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


class MixedSampler(PresetSampler):
    """The :class:`~clrp_rl4co.envs.clrp.generator.PresetSampler` of preset ``"mixed"``.

    Args:
        options: the generator's ``mixed`` keyword: a :class:`MixedRanges`, a mapping of its
            fields (the defaults for the others), or None (every default).
        given: the generator's distribution arguments (:func:`mixed_ranges` rejects those
            away from their defaults).
    """

    def __init__(self, options: Mapping | MixedRanges | None, **given):
        #: the ranges drawn from
        self.ranges = mixed_ranges(options, **given)

    def bounds(self, side: float) -> dict[str, float]:
        """The ranges' largest size, demand bounds, largest vehicle capacity and largest fixed
        cost (on a square of side ``side``)."""
        min_demand, max_demand = self.ranges.demand_bounds()
        return dict(
            num_loc=self.ranges.num_loc[1],
            min_demand=min_demand,
            max_demand=max_demand,
            vehicle_capacity=self.ranges.vehicle_capacity_bound(),
            vehicle_fixed_cost=self.ranges.fixed_cost[1] * side,
        )

    def sample(self, generator: CLRPGenerator, batch_size: list[int]) -> TensorDict:
        """A batch drawn from :attr:`ranges` (see :class:`MixedRanges`)."""
        return _generate_mixed(self.ranges, generator, batch_size)
