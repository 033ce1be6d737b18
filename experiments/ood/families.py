"""Synthetic out-of-distribution CLRP families for the OOD diagnosis.

Each family is a small seeded test set (``datasets/ood/<name>.npz``, written with
:func:`clrp_rl4co.envs.clrp.dataset.save_dataset`) built to look like an instance class a
user may bring, or to change exactly one input of the DRLHQ paper's ``clrp100`` distribution:

* ``c100_*``: one factor at a time. The same 12 ``clrp100`` instances (generator seed 160100)
  with one input changed (depot capacity, vehicle capacity, fixed cost, opening costs, the unit
  of distance, the customer layout); ``c100_base`` is the unchanged control.
* ``tb*``: look-alikes of the Tuzun-Burke class described in the issue (the public files are
  kept aside for verification and are *not* used): coordinates in ``[0, 100]``, clustered
  customers, uniform candidate depots, ``q = 150``, integer demands in ``{10..20}``, ``F = 10``,
  opening cost 100 for every depot, every depot capacity twice the total demand, real
  (unrounded) Euclidean costs. ``tb100_*`` minus one factor put one input back into the
  paper's range on the same instances as ``tb100_d10``.
* ``bar*``: look-alikes of the second kept-aside class (50-100 customers, no fixed cost):
  coordinates in ``[0, 100]``, uniform customers, ``q = 160``, demands in ``{1..40}``,
  ``F = 0``, opening costs in ``[50, 150)``, depot capacities ``[0.4, 0.8)`` x total demand.

Every instance is built as a :class:`clrp_rl4co.data.CLRPInstance` (so the env's validity rules
run on it) and stacked with :func:`clrp_rl4co.data.instances_to_tensordict` (network ``locs``
scaled into the unit square per instance, ``cost_locs`` raw, as for benchmark files).

Run as a file (``experiments/`` is not needed as a package)::

    python experiments/ood/families.py            # (re)write datasets/ood/*.npz + manifest
    python experiments/ood/families.py --check    # rebuild in memory, compare checksums
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from tensordict import TensorDict

from clrp_rl4co.data import CLRPInstance, instances_to_tensordict, tensordict_to_instances
from clrp_rl4co.envs.clrp import (
    CLRPGenerator,
    dataset_checksum,
    generate_dataset,
    save_dataset,
)

ROOT = Path(__file__).resolve().parents[2]
#: Where the family files and their manifest are written.
OUT_DIR = ROOT / "datasets" / "ood"
MANIFEST = "manifest.json"

#: Instances per family (the 200-customer family has fewer: PyVRP runs 10 s each on a CPU).
SIZE = 12
SIZE_LARGE = 6
#: Seed of the ``clrp100`` draws shared by every ``c100_*`` family.
C100_SEED = 160100


@dataclass(frozen=True)
class Family:
    """One synthetic family.

    Attributes:
        name: file stem (``datasets/ood/<name>.npz``).
        factor: the input(s) changed, in words (the diagnosis tables' column).
        description: how the instances are built.
        model: the shipped model the issue evaluated on such instances.
        size: number of instances.
        seed: the numpy seed of the family's own draws.
        build: ``build(size, seed) -> list[CLRPInstance]``.
    """

    name: str
    factor: str
    description: str
    model: str
    size: int
    seed: int
    build: Callable[[int, int], list[CLRPInstance]]


# ---------------------------------------------------------------------------------- layouts
def clustered_points(
    rng: np.random.Generator,
    n: int,
    side: float,
    num_clusters: tuple[int, int] = (3, 8),
    std: tuple[float, float] = (0.05, 0.10),
    margin: float = 0.15,
) -> np.ndarray:
    """``n`` points [n, 2] in ``[0, side]^2`` around a few Gaussian cluster centres.

    ``k`` centres (integer uniform in ``num_clusters``, both ends inclusive) are uniform in
    ``[margin, 1 - margin]^2 x side``; each point picks a centre uniformly and is drawn from an
    isotropic Gaussian of standard deviation ``U(std) x side`` (one per cluster). Points that
    fall outside the square are redrawn (rejection, never clipped).
    """
    k = int(rng.integers(num_clusters[0], num_clusters[1] + 1))
    centres = rng.uniform(margin, 1.0 - margin, size=(k, 2)) * side
    sigma = rng.uniform(std[0], std[1], size=k) * side
    out = np.empty((n, 2))
    todo = np.arange(n)
    while todo.size:
        which = rng.integers(0, k, size=todo.size)
        pts = centres[which] + sigma[which, None] * rng.standard_normal((todo.size, 2))
        inside = ((pts >= 0) & (pts <= side)).all(-1)
        out[todo[inside]] = pts[inside]
        todo = todo[~inside]
    return out


# ---------------------------------------------------------------------------------- c100_*
def _clrp100_base(size: int) -> list[CLRPInstance]:
    """``size`` instances of the paper's ``clrp100`` distribution (generator seed 160100)."""
    td = generate_dataset(CLRPGenerator(preset="clrp100"), size, seed=C100_SEED)
    return tensordict_to_instances(td, names=[f"c100_{b}" for b in range(size)])


def _c100(change: Callable[[CLRPInstance, np.random.Generator], dict]):
    """A builder: the shared ``clrp100`` instances with the fields ``change`` returns."""

    def build(size: int, seed: int) -> list[CLRPInstance]:
        rng = np.random.default_rng(seed)
        return [replace(inst, **change(inst, rng), _dist=None) for inst in _clrp100_base(size)]

    return build


def _cluster_unit(inst: CLRPInstance, rng: np.random.Generator) -> dict:
    return {"customer_locs": clustered_points(rng, inst.num_customers, 1.0)}


# ---------------------------------------------------------------------------------- tb*
def _tb_instance(
    rng: np.random.Generator,
    n: int,
    d: int,
    name: str,
    clustered: bool = True,
    q: float = 150.0,
    paper_costs: bool = False,
    paper_capacity: bool = False,
) -> CLRPInstance:
    """One Tuzun-Burke look-alike (see the module docstring); the flags put one input back
    into the paper's ``clrp100`` range (same random draws otherwise)."""
    depots = rng.uniform(0.0, 100.0, size=(d, 2))
    uniform = rng.uniform(0.0, 100.0, size=(n, 2))
    grouped = clustered_points(rng, n, 100.0)  # drawn either way: same stream for every flag
    customers = grouped if clustered else uniform
    demand = rng.integers(10, 21, size=n).astype(float)
    total = demand.sum()
    capacity = np.full(d, 2.0 * total)
    paper_cap = rng.uniform(0.34, 0.62, size=d) * total  # clrp100's Q_i / T range
    opening, fixed = np.full(d, 100.0), 10.0
    paper_open = rng.uniform(5.0, 15.0, size=d)
    if paper_costs:  # the paper's cost ratios: unit square, F = 1, O in [5, 15)
        depots, customers = depots / 100.0, customers / 100.0
        opening, fixed = paper_open, 1.0
    if paper_capacity:
        capacity = paper_cap
    return CLRPInstance(
        depot_locs=depots,
        customer_locs=customers,
        depot_capacity=capacity,
        opening_cost=opening,
        demand=demand,
        vehicle_capacity=q,
        vehicle_fixed_cost=fixed,
        name=name,
    )


def _tb(n: int, d: int, jitter: float = 0.0, **flags):
    """Builder of Tuzun-Burke look-alikes; ``jitter > 0`` multiplies each opening cost by
    ``1 + jitter u`` (``u`` uniform in ``[-1, 1]``, drawn after the instances)."""

    def build(size: int, seed: int) -> list[CLRPInstance]:
        rng = np.random.default_rng(seed)
        out = [_tb_instance(rng, n, d, f"tb{n}_{d}_{b}", **flags) for b in range(size)]
        if jitter:
            factors = 1 + jitter * rng.uniform(-1.0, 1.0, size=(size, d))
            out = [
                replace(inst, opening_cost=inst.opening_cost * f, _dist=None)
                for inst, f in zip(out, factors)
            ]
        return out

    return build


# ---------------------------------------------------------------------------------- bar*
def _bar(n: int, d: int, fixed: float = 0.0, identical: bool = False):
    """Builder of Barreto look-alikes; ``identical``: every ``Q_i = 0.6 T`` and ``O_i = 100``
    (same random draws otherwise)."""

    def build(size: int, seed: int) -> list[CLRPInstance]:
        rng = np.random.default_rng(seed)
        out = []
        for b in range(size):
            demand = rng.integers(1, 41, size=n).astype(float)
            depots = rng.uniform(0.0, 100.0, size=(d, 2))
            customers = rng.uniform(0.0, 100.0, size=(n, 2))
            capacity = rng.uniform(0.4, 0.8, size=d) * demand.sum()
            opening = rng.uniform(50.0, 150.0, size=d)
            if identical:
                capacity, opening = np.full(d, 0.6 * demand.sum()), np.full(d, 100.0)
            out.append(
                CLRPInstance(
                    depot_locs=depots,
                    customer_locs=customers,
                    depot_capacity=capacity,
                    opening_cost=opening,
                    demand=demand,
                    vehicle_capacity=160.0,
                    vehicle_fixed_cost=fixed,
                    name=f"bar{n}_{b}",
                )
            )
        return out

    return build


def _families() -> list[Family]:
    c100 = "shared clrp100 draws (generator seed 160100)"
    out = [
        Family(
            "c100_base",
            "none (control)",
            c100 + ", unchanged",
            "drlhq_clrp100",
            SIZE,
            1,
            _c100(lambda i, r: {}),
        ),
        Family(
            "c100_cap2x",
            "Q_i = 2 x total demand",
            c100 + "; every depot capacity = 2 x the total demand (paper: Q_i / T in 0.34-0.62)",
            "drlhq_clrp100",
            SIZE,
            2,
            _c100(lambda i, r: {"depot_capacity": np.full(i.num_depots, 2 * i.total_demand())}),
        ),
        Family(
            "c100_q150",
            "q = 150",
            c100 + "; vehicle capacity 150 (paper 70): demand / q "
            "0.07-0.13, about 10 customers a route",
            "drlhq_clrp100",
            SIZE,
            3,
            _c100(lambda i, r: {"vehicle_capacity": 150.0}),
        ),
        Family(
            "c100_F10",
            "F x 10",
            c100 + "; fixed cost per route 10 (paper 1)",
            "drlhq_clrp100",
            SIZE,
            4,
            _c100(lambda i, r: {"vehicle_fixed_cost": 10.0}),
        ),
        Family(
            "c100_open10",
            "O_i x 10",
            c100 + "; opening costs x 10 (50-150)",
            "drlhq_clrp100",
            SIZE,
            5,
            _c100(lambda i, r: {"opening_cost": 10.0 * i.opening_cost}),
        ),
        Family(
            "c100_openeq",
            "O_i all equal",
            c100 + "; every opening cost 10 (the range's middle), so Q_i / O_i only follows Q_i",
            "drlhq_clrp100",
            SIZE,
            6,
            _c100(lambda i, r: {"opening_cost": np.full(i.num_depots, 10.0)}),
        ),
        Family(
            "c100_dist100",
            "distances x 100",
            c100 + "; coordinates x 100 (F and O_i "
            "unchanged, so 100x smaller next to distances; the network input is identical)",
            "drlhq_clrp100",
            SIZE,
            7,
            _c100(
                lambda i, r: {
                    "depot_locs": 100 * i.depot_locs,
                    "customer_locs": 100 * i.customer_locs,
                }
            ),
        ),
        Family(
            "c100_cluster",
            "clustered customers",
            c100 + "; customers redrawn in 3-8 "
            "Gaussian clusters (std 0.05-0.10, rejection inside the square)",
            "drlhq_clrp100",
            SIZE,
            8,
            _c100(_cluster_unit),
        ),
        Family(
            "tb100_d10",
            "TB-like",
            "Tuzun-Burke look-alike, 100 customers, 10 depots",
            "drlhq_clrp100",
            SIZE,
            11,
            _tb(100, 10),
        ),
        Family(
            "tb100_d20",
            "TB-like",
            "Tuzun-Burke look-alike, 100 customers, 20 depots",
            "drlhq_clrp100",
            SIZE,
            12,
            _tb(100, 20),
        ),
        Family(
            "tb200_d20",
            "TB-like",
            "Tuzun-Burke look-alike, 200 customers, 20 depots",
            "drlhq_clrp100",
            SIZE_LARGE,
            13,
            _tb(200, 20),
        ),
        Family(
            "tb100_paperq",
            "TB with q = 70",
            "tb100_d10's instances with q = 70 (paper's demand / q)",
            "drlhq_clrp100",
            SIZE,
            11,
            _tb(100, 10, q=70.0),
        ),
        Family(
            "tb100_papercap",
            "TB with paper Q_i",
            "tb100_d10's instances with Q_i / T uniform in [0.34, 0.62) (clrp100's range)",
            "drlhq_clrp100",
            SIZE,
            11,
            _tb(100, 10, paper_capacity=True),
        ),
        Family(
            "tb100_papercost",
            "TB with paper costs",
            "tb100_d10's instances scaled to "
            "the unit square with F = 1 and O_i in [5, 15) (the paper's cost ratios)",
            "drlhq_clrp100",
            SIZE,
            11,
            _tb(100, 10, paper_costs=True),
        ),
        Family(
            "tb100_uniform",
            "TB with uniform customers",
            "tb100_d10's instances with customers uniform in [0, 100]^2",
            "drlhq_clrp100",
            SIZE,
            11,
            _tb(100, 10, clustered=False),
        ),
        Family(
            "tb100_paperall",
            "TB with paper q, Q_i, costs",
            "tb100_d10's instances with "
            "q = 70, paper Q_i and paper cost ratios (only the clustered layout and "
            "demands 10-20 stay)",
            "drlhq_clrp100",
            SIZE,
            11,
            _tb(100, 10, q=70.0, paper_capacity=True, paper_costs=True),
        ),
        Family(
            "bar50",
            "Barreto-like",
            "50 customers, 5 depots, [0, 100]^2 uniform, q = 160, "
            "demand 1-40, F = 0, O_i in [50, 150), Q_i in [0.4, 0.8) x total demand",
            "drlhq_clrp50",
            SIZE,
            21,
            _bar(50, 5),
        ),
        Family(
            "bar100",
            "Barreto-like",
            "as bar50 with 100 customers and 10 depots",
            "drlhq_clrp50",
            SIZE,
            22,
            _bar(100, 10),
        ),
        # added after the first diagnosis run showed that identical depots are the trigger
        Family(
            "c100_equal",
            "identical depots",
            c100 + "; every Q_i = 700 and every O_i = 10 (the middle of clrp100's ranges): "
            "DRLHQ's min-max normalised Q_i / O_i has no spread",
            "drlhq_clrp100",
            SIZE,
            9,
            _c100(
                lambda i, r: {
                    "depot_capacity": np.full(i.num_depots, 700.0),
                    "opening_cost": np.full(i.num_depots, 10.0),
                }
            ),
        ),
        Family(
            "tb100_jitter",
            "TB with O_i x (1 +- 1%)",
            "tb100_d10's instances with each opening cost x (1 + 0.01 u), u uniform in "
            "[-1, 1]: depots no longer identical",
            "drlhq_clrp100",
            SIZE,
            11,
            _tb(100, 10, jitter=0.01),
        ),
        Family(
            "c100_dist10",
            "distances x 10",
            c100 + "; coordinates x 10: F / L = 0.1 and O_i / L = 0.5-1.5, the cost ratios "
            "of the Tuzun-Burke look-alikes (the network input is identical)",
            "drlhq_clrp100",
            SIZE,
            10,
            _c100(
                lambda i, r: {
                    "depot_locs": 10 * i.depot_locs,
                    "customer_locs": 10 * i.customer_locs,
                }
            ),
        ),
        Family(
            "bar50_equal",
            "Barreto-like, identical depots",
            "bar50's instances with every Q_i = 0.6 x total demand and every O_i = 100",
            "drlhq_clrp50",
            SIZE,
            21,
            _bar(50, 5, identical=True),
        ),
    ]
    return out


#: Every family, by name.
FAMILIES: dict[str, Family] = {f.name: f for f in _families()}


def family_tensordict(family: Family) -> TensorDict:
    """The family's instances as an env input TensorDict (batch ``[size]``)."""
    return instances_to_tensordict(family.build(family.size, family.seed))


def input_stats(td: TensorDict) -> dict[str, float]:
    """Scale-free summary of a batch (means over instances): ``Q_i / T`` (depot capacity over
    total demand), ``d / q``, ``q / mean d`` (customers per full route), ``F / L`` and
    ``O_i / L`` with ``L`` the side of the instance's bounding square in cost units."""
    cost = td["cost_locs"].double()
    span = (cost.amax(-2) - cost.amin(-2)).amax(-1)  # [B]
    span = span * (1 + 99 * td["rounded_costs"].double())  # ceil(100 d) costs
    total = td["demand"].double().sum(-1, keepdim=True)
    q = td["vehicle_capacity"].double()
    return {
        "Q/T": float((td["depot_capacity"] / total).mean()),
        "sumQ/T": float((td["depot_capacity"].sum(-1, keepdim=True) / total).mean()),
        "d/q": float((td["demand"] / q).mean()),
        "q/mean_d": float((q[:, 0] / td["demand"].double().mean(-1)).mean()),
        "F/L": float((td["vehicle_fixed_cost"].double()[:, 0] / span).mean()),
        "O/L": float((td["opening_cost"].double() / span[:, None]).mean()),
    }


def build_all(out_dir: Path = OUT_DIR, check: bool = False) -> list[dict]:
    """Write (or, with ``check``, verify against the files) every family and the manifest."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for fam in FAMILIES.values():
        td = family_tensordict(fam)
        path = out_dir / f"{fam.name}.npz"
        arrays = {k: td[k].numpy() for k in td.keys()}
        if check:
            manifest = json.loads((out_dir / MANIFEST).read_text())
            expected = {r["name"]: r["checksum"] for r in manifest}[fam.name]
            if dataset_checksum(arrays) != expected:
                raise ValueError(f"{fam.name}: rebuilt instances differ from {path}")
            checksum = expected
        else:
            checksum = save_dataset(td, path, seed=fam.seed)
        rows.append(
            {
                "name": fam.name,
                "file": str(path.relative_to(ROOT)),
                "factor": fam.factor,
                "description": fam.description,
                "model": fam.model,
                "instances": fam.size,
                "customers": int(td["demand"].shape[-1]),
                "depots": int(td["depot_capacity"].shape[-1]),
                "seed": fam.seed,
                "checksum": checksum,
                "stats": input_stats(td),
            }
        )
    if not check:
        (out_dir / MANIFEST).write_text(json.dumps(rows, indent=1) + "\n")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify instead of writing")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    rows = build_all(args.out, check=args.check)
    for r in rows:
        stats = " ".join(f"{k}={v:.3g}" for k, v in r["stats"].items())
        print(
            f"{r['name']:15s} N={r['customers']:3d} D={r['depots']:2d} n={r['instances']:2d} "
            f"{stats}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
