"""The hard families: seeded CLRP instances with heterogeneous or nearly free depots, 100 to
600 customers, pinned by SHA-256 checksums and published as Prodhon files.

Every instance shares the Prodhon conventions: integer coordinates in ``[0, side]^2``, integer
demands uniform in ``{11, ..., 20}``, vehicle capacity ``q = 70``, vehicle cost ``F = 1000``
and arc costs ``ceil(100 d)`` (``rounded_costs``). Per size ``N``: ``D = min(30, N / 20 + 5)``
candidate depots, uniform in the square, and ``side = 50 ceil(N / 200)`` (50, 50, 100, 100,
150, 150 for 100 ... 600 customers). Instance ``k`` of a (family, size) has uniform customers
for even ``k`` and clustered ones (3-8 Gaussian clusters,
:func:`experiments.ood.families.clustered_points`) for odd ``k``. The layout (depot and
customer coordinates, demands) depends only on ``(N, k)``, so every family has the same
customers at the same ``(N, k)`` and differs only in its depots' capacities and costs; the
families of one kind share the random draws of those too (one factor at a time).

Two kinds, each a base family and variations (``T``: the total demand):

* **heterogeneous depots** (``hetero*``): three capacity classes in the ratio
  ``1 : sqrt(s) : s`` (``s``: the spread, largest over smallest capacity), about half the
  depots small, a sixth large, the rest medium, scaled so that the capacities sum to ``r T``;
  opening costs grow with capacity with economies of scale,
  ``O_i = round(7.5 side Q_i^0.8 u_i)``, ``u_i`` uniform in ``[0.85, 1.15]``. ``hetero``:
  ``s = 10``, ``r = 2`` (at 600 customers capacities about 190 to 1,940 and opening costs about
  65,000 to 545,000); ``hetero-spread20``: ``s = 20``; ``hetero-tight``: ``r = 1.5``.
* **nearly free depots** (``free*``): capacities ``r T w_i / sum w``, ``w_i`` uniform in
  ``[0.8, 1.2]``; opening costs ``round(side u_i)``, ``u_i`` uniform in ``[1, 2]`` (50 to 300,
  against a vehicle cost of 1,000), so the best solutions open many depots. ``free``:
  ``r = 4``; ``free-tight``: ``r = 2``.

Instances are named ``<family>-<N>-<k>``; the files are ``datasets/hard/<family>/<name>.dat``
(Prodhon format, ``docs/formats.md``), which ``clrp-rl4co solve`` reads. :func:`load` reads a
(family, size) from its files, or draws it when they are missing; either way it must match the
checksum pinned in :data:`CHECKSUMS`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.envs.clrp import dataset_checksum

ROOT = Path(__file__).resolve().parents[2]
#: Where the instance files are published (one folder per family).
DATA_DIR = ROOT / "datasets" / "hard"
#: Customers per instance, every family.
SIZES = (100, 200, 300, 400, 500, 600)
#: Instances per (family, size): ``k = 0`` uniform customers, ``k = 1`` clustered.
COUNT = 2
#: Root seed of every draw (issue 36).
SEED = 36
VEHICLE_CAPACITY = 70.0
VEHICLE_FIXED_COST = 1000.0
#: Customer demands are integers in this range (both ends included).
DEMAND = (11, 20)
#: Heterogeneous opening costs: ``COST_SCALE x side x Q^COST_EXPONENT x U(COST_NOISE)``.
COST_SCALE = 7.5
COST_EXPONENT = 0.8
COST_NOISE = (0.85, 1.15)
#: Nearly free depots: capacity weights and opening cost per unit of ``side``.
FREE_WEIGHTS = (0.8, 1.2)
FREE_COST = (1.0, 2.0)
#: The stream of the depot draws of each kind (after the layout's).
KIND_STREAM = {"hetero": 1, "free": 2}


@dataclass(frozen=True)
class Family:
    """One family of instances.

    Attributes:
        name: ``hetero``, ``hetero-spread20``, ... (the instances' prefix and folder).
        kind: ``hetero`` (heterogeneous depots) or ``free`` (nearly free depots).
        capacity_ratio: total depot capacity over total demand (``r``).
        spread: largest over smallest depot capacity (``s``; ``hetero`` only, else None).
        description: the family in words.
    """

    name: str
    kind: str
    capacity_ratio: float
    spread: float | None
    description: str


#: Every family, by name.
FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "hetero",
            "hetero",
            capacity_ratio=2.0,
            spread=10.0,
            description="heterogeneous depots: capacities 1 : 3.2 : 10, total 2 x demand, "
            "opening cost ~ capacity^0.8",
        ),
        Family(
            "hetero-spread20",
            "hetero",
            capacity_ratio=2.0,
            spread=20.0,
            description="as hetero with capacities 1 : 4.5 : 20",
        ),
        Family(
            "hetero-tight",
            "hetero",
            capacity_ratio=1.5,
            spread=10.0,
            description="as hetero with total capacity 1.5 x demand",
        ),
        Family(
            "free",
            "free",
            capacity_ratio=4.0,
            spread=None,
            description="nearly free depots: opening cost 1-2 x side (50-300), capacities "
            "within +-20%, total 4 x demand",
        ),
        Family(
            "free-tight",
            "free",
            capacity_ratio=2.0,
            spread=None,
            description="as free with total capacity 2 x demand",
        ),
    )
}

#: SHA-256 of each (family, size)'s instances (:func:`checksum`), pinned when published.
CHECKSUMS: dict[str, str] = {
    "hetero-100": "816160e44f75dd0c4e6a1da9789f0a028a93fdf283218fa1cd80c73d1f02e554",
    "hetero-200": "c4ff05f69a3c8d9b99f1fbb02ea24a742f36e5bbe4c1c12dfe334a1d6193f85a",
    "hetero-300": "4cd60f1f49b09706d41c196a7781d6f2d84a1a02f9740ac00f70ea4732ef835e",
    "hetero-400": "4e3648708a346a65d3f1e29596a0ac863eb6ace228ac85b88aeab90f3a464b54",
    "hetero-500": "1deb8ed9963546d379e13f613b12330df4b9693472824b55891fc26b913a22b5",
    "hetero-600": "4459e1ef9a87c8641c6c93e80fec4b31cec968c720acd8446a1c01b668c8484a",
    "hetero-spread20-100": "9ba69c2898ab5d8b35b5d102612acf2e48ce80cd580155ecc28adcecac3cf317",
    "hetero-spread20-200": "146c54cfd50bdd41b5b03b97800d03a4297df17eb2c33453f84abaa02f8b13a8",
    "hetero-spread20-300": "c511387fe7c8d710db7f400af855fd8d70ce2b253a9e22d3d849a9a98791ffe3",
    "hetero-spread20-400": "3ce321f6430cc68b63ffcdf70cccc313331f595b779ca87a443722d593f96ac9",
    "hetero-spread20-500": "1c65de41cac7da023f8f76fa03d5116799dcd2e145c88f7cedf84566db24f277",
    "hetero-spread20-600": "4b26cc5a15991118935f8cd192d64ff28283a8884e3e66952c3f7fe492583346",
    "hetero-tight-100": "f415fcd0e3000011d8f5347e9a8203365e4d69da0a5ab510d4c12cca80e06da3",
    "hetero-tight-200": "7f0dd2d0f59c1a0efd4eac41c90462b052faec70c0509925c4102b57a370466a",
    "hetero-tight-300": "2cce617682a8aac9542a97dc431de5a2f9b32dac8c32dac8fd9fc34c82281afc",
    "hetero-tight-400": "1a1e4ea1a7b78cf334c280ead43c4791b4446a260b1e2f2899c1f6d6de4d9697",
    "hetero-tight-500": "5219ea5c6496f1ca8af6e637381cbf8f11be5ca19695b0ff89671b108d2c2f82",
    "hetero-tight-600": "b78d21e253ef191f5558668822b9312614da5681c799885d82936b1447b2af6c",
    "free-100": "f9b1b0b5e09831f7e8196ce558887022481d715f3e40e240d5c61cf26c6649eb",
    "free-200": "ecc1f819aa48886f95c9c9e294ebc2cb38084c2390e608a3854cc55978ba43f7",
    "free-300": "41dc6d4a2aeeab80b3950426e7d9a2b16445d4f7d84b80cf8e2bbdb6aa652d89",
    "free-400": "f02b57a9ced45feaded27e063385882a7756477cee3e880e4300963b9daa15c7",
    "free-500": "a9dd0bf8cffb389fa1dc9e08716fb5f1d21e9f365693c4a1bdda4f278662768f",
    "free-600": "07d9370f8c23e72e5289439ee8e00754f1b3ffe490517826005c0e3cba5dff37",
    "free-tight-100": "db6d3f2577f4d03b086a81c41940d3a1b23a0c712bcfd87af59fc7fd67b657ca",
    "free-tight-200": "a5f69ec60166ce3acba7785f634d89d476ccd52061751dd680791537d1635627",
    "free-tight-300": "a9bc2c69af6734408f32d266bc60f42e3684d45d32e7f91453f20fe8d01fab9e",
    "free-tight-400": "4ea62d3a6d601d3a3d0807eb9e1e9d901887ed6059047aaeae91e4a475d977ab",
    "free-tight-500": "de3faaceca6b44ffd01aca017bae4190cfc4b869f5cb2fda6cfe73f358665ec3",
    "free-tight-600": "3f9a33104754e05fc4e012b87de3fd6ca0453717645a7fe87693641bec0bb918",
}


def num_depots(n: int) -> int:
    """Candidate depots at ``n`` customers: ``min(30, n / 20 + 5)``."""
    return min(30, n // 20 + 5)


def side(n: int) -> int:
    """Side of the square at ``n`` customers: ``50 ceil(n / 200)``."""
    return 50 * math.ceil(n / 200)


def instance_name(family: str, n: int, k: int) -> str:
    """``<family>-<N>-<k>``, e.g. ``hetero-300-1``."""
    return f"{family}-{n}-{k}"


def _check(family: str, n: int, k: int | None = None) -> Family:
    if family not in FAMILIES:
        raise ValueError(f"family: unknown {family!r}; choose from {list(FAMILIES)}")
    if n not in SIZES:
        raise ValueError(f"size: {n} customers is not one of {list(SIZES)}")
    if k is not None and not 0 <= k < COUNT:
        raise ValueError(f"instance: k must be in [0, {COUNT}), got {k}")
    return FAMILIES[family]


def layout(n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The depot coordinates [D, 2], customer coordinates [N, 2] and demands [N] of instance
    ``k`` at ``n`` customers (shared by every family)."""
    from experiments.ood.families import clustered_points

    rng = np.random.default_rng([SEED, n, k])
    length = side(n)
    depots = rng.integers(0, length + 1, size=(num_depots(n), 2)).astype(float)
    if k % 2 == 0:
        customers = rng.integers(0, length + 1, size=(n, 2)).astype(float)
    else:
        customers = np.rint(clustered_points(rng, n, float(length)))
    demand = rng.integers(DEMAND[0], DEMAND[1] + 1, size=n).astype(float)
    return depots, customers, demand


def class_sizes(d: int) -> tuple[int, int, int]:
    """Small, medium and large depots of a heterogeneous family with ``d`` depots: about a
    half small (``ceil(d / 2)``), a sixth large (``(d + 3) // 6``), the rest medium."""
    small, large = (d + 1) // 2, (d + 3) // 6
    return small, d - small - large, large


def hetero_depots(
    rng: np.random.Generator, d: int, total: float, length: float, spread: float, ratio: float
) -> tuple[np.ndarray, np.ndarray]:
    """Capacities and opening costs [D] of heterogeneous depots (see the module docstring)."""
    small, medium, large = class_sizes(d)
    factors = np.array([1.0] * small + [math.sqrt(spread)] * medium + [spread] * large)
    base = ratio * total / factors.sum()
    capacity = np.rint(base * rng.permutation(factors))
    noise = rng.uniform(*COST_NOISE, size=d)
    opening = np.rint(COST_SCALE * length * capacity**COST_EXPONENT * noise)
    return capacity, opening


def free_depots(
    rng: np.random.Generator, d: int, total: float, length: float, ratio: float
) -> tuple[np.ndarray, np.ndarray]:
    """Capacities and opening costs [D] of nearly free depots (see the module docstring)."""
    weights = rng.uniform(*FREE_WEIGHTS, size=d)
    capacity = np.rint(ratio * total * weights / weights.sum())
    opening = np.rint(length * rng.uniform(*FREE_COST, size=d))
    return capacity, opening


def draw(family: str, n: int, k: int) -> CLRPInstance:
    """Instance ``k`` of ``family`` at ``n`` customers, drawn from its seeds."""
    fam = _check(family, n, k)
    depots, customers, demand = layout(n, k)
    rng = np.random.default_rng([SEED, n, k, KIND_STREAM[fam.kind]])
    return family_instance(fam, rng, depots, customers, demand, instance_name(family, n, k))


def family_instance(
    fam, rng: np.random.Generator, depots, customers, demand, name: str
) -> CLRPInstance:
    """The instance of family ``fam`` on the given points and demands: its depots' capacities
    and opening costs drawn from ``rng`` by the family's kind (:func:`hetero_depots` or
    :func:`free_depots`), the families' vehicle, arc costs ``ceil(100 d)``."""
    n = len(customers)
    total, length, d = float(demand.sum()), float(side(n)), len(depots)
    if fam.kind == "hetero":
        capacity, opening = hetero_depots(rng, d, total, length, fam.spread, fam.capacity_ratio)
    else:
        capacity, opening = free_depots(rng, d, total, length, fam.capacity_ratio)
    return CLRPInstance(
        depot_locs=depots,
        customer_locs=customers,
        depot_capacity=capacity,
        opening_cost=opening,
        demand=demand,
        vehicle_capacity=VEHICLE_CAPACITY,
        vehicle_fixed_cost=VEHICLE_FIXED_COST,
        rounded_costs=True,
        name=name,
    )


def checksum(instances: list[CLRPInstance]) -> str:
    """SHA-256 over the instances' arrays (``dataset_checksum`` of their fields as float64,
    keyed by instance order and field; names are not part of it)."""
    arrays = {}
    for b, inst in enumerate(instances):
        for key in ("depot_locs", "customer_locs", "depot_capacity", "opening_cost", "demand"):
            arrays[f"{b}.{key}"] = np.asarray(getattr(inst, key), dtype=np.float64)
        scalars = (inst.vehicle_capacity, inst.vehicle_fixed_cost, float(inst.rounded_costs))
        arrays[f"{b}.scalars"] = np.array(scalars, dtype=np.float64)
    return dataset_checksum(arrays)


def key(family: str, n: int) -> str:
    """The key of a (family, size) in :data:`CHECKSUMS`: ``<family>-<N>``."""
    return f"{family}-{n}"


def path_of(name: str, family: str, root: Path = DATA_DIR) -> Path:
    """The Prodhon file of instance ``name``: ``<root>/<family>/<name>.dat``."""
    return Path(root) / family / f"{name}.dat"


def load(family: str, n: int, root: Path | None = DATA_DIR) -> list[CLRPInstance]:
    """The :data:`COUNT` instances of ``family`` at ``n`` customers, read from their files
    under ``root`` when all are there, else drawn (``root=None``: always drawn).

    Raises:
        ValueError: unknown family or size, or instances whose checksum differs from the
            pinned one (naming the files or the draw).
    """
    from clrp_rl4co.data.prodhon import read_prodhon
    from experiments.published_sets import require_checksum

    _check(family, n)
    names = [instance_name(family, n, k) for k in range(COUNT)]
    paths = [path_of(name, family, root) for name in names] if root is not None else []
    if paths and all(p.is_file() for p in paths):
        instances = [read_prodhon(p) for p in paths]
        where = f"{Path(root) / family}/{family}-{n}-*.dat"
    else:
        instances = [draw(family, n, k) for k in range(COUNT)]
        where = f"the draw of {key(family, n)}"
    require_checksum(checksum(instances), CHECKSUMS.get(key(family, n)), where)
    return instances


def every(
    families: list[str] | None = None, sizes: list[int] | None = None
) -> Iterator[tuple[str, int]]:
    """The (family, size) pairs in the benchmark's order (family, then size)."""
    for family in families or FAMILIES:
        for n in sizes or SIZES:
            yield family, n


def write(root: Path = DATA_DIR) -> list[Path]:
    """Draw every instance, check it against :data:`CHECKSUMS` and write its Prodhon file."""
    from clrp_rl4co.data.prodhon import write_prodhon

    written = []
    for family, n in every():
        for inst in load(family, n, root=None):
            path = path_of(inst.name, family, root)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_prodhon(inst, path)
            written.append(path)
    return written
