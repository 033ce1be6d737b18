"""The instances of the depot-choice data: seeded generated ones and the 44 development files.

Generated instance ``i`` follows :mod:`benchmarks.hard.families` (Prodhon conventions, ``q =
70``, ``F = 1000``, arcs ``ceil(100 d)``, ``D = min(30, N / 20 + 5)`` depots in a square of side
``50 ceil(N / 200)``) with its own seeds (``[GEN_SEED, i]``, never the benchmark's), so no
benchmark instance is among them: family ``FAMILY_CYCLE[i % 5]``, ``N = SIZES[(i // 5) % 6]``
customers, uniform or clustered customers by a coin of its seed. Named ``gen<i>-<family>-<N>``.

The development files are the 44 files of ``$CLRP_BENCHMARKS_DIR/schneider/`` (numbers 2 and
4 of kinds ``c`` and ``e``); the set's other instances are never read.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from benchmarks.hard.families import (
    DEMAND,
    FAMILIES,
    SIZES,
    family_instance,
    num_depots,
    side,
)
from clrp_rl4co.data import CLRPInstance

#: Root seed of the generated instances (the issue's item 3; the hard benchmark uses 36).
GEN_SEED = 303
#: Families of the generated instances, in turn.
FAMILY_CYCLE = ("hetero", "free", "hetero-tight", "hetero-spread20", "free-tight")
#: The development files: sizes, depot counts, numbers and kinds of Schneider & Löffler's set.
DEV_LAYOUTS = ((100, 5), (100, 10), (200, 10), (200, 15), (300, 15), (300, 20), (400, 20),
               (400, 25), (500, 25), (500, 30), (600, 30))  # fmt: skip
DEV_NUMBERS = (2, 4)
DEV_KINDS = ("c", "e")


def generated(i: int) -> CLRPInstance:
    """Generated instance ``i`` (module docstring)."""
    from experiments.ood.families import clustered_points

    if i < 0:
        raise ValueError(f"i: expected >= 0, got {i}")
    family = FAMILIES[FAMILY_CYCLE[i % len(FAMILY_CYCLE)]]
    n = SIZES[(i // len(FAMILY_CYCLE)) % len(SIZES)]
    rng = np.random.default_rng([GEN_SEED, i])
    length = float(side(n))
    depots = rng.integers(0, int(length) + 1, size=(num_depots(n), 2)).astype(float)
    if rng.random() < 0.5:
        customers = rng.integers(0, int(length) + 1, size=(n, 2)).astype(float)
    else:
        customers = np.rint(clustered_points(rng, n, length))
    demand = rng.integers(DEMAND[0], DEMAND[1] + 1, size=n).astype(float)
    return family_instance(family, rng, depots, customers, demand, f"gen{i:03d}-{family.name}-{n}")


def generated_kind(name: str) -> str:
    """The family of a generated instance's name (``gen007-hetero-tight-300``:
    ``hetero-tight``)."""
    return name.split("-", 1)[1].rsplit("-", 1)[0]


def dev_names() -> list[str]:
    """The 44 development files' names (``100-5-2c`` ... ``600-30-4e``), by size."""
    return [f"{n}-{d}-{k}{kind}" for n, d in DEV_LAYOUTS for k in DEV_NUMBERS for kind in DEV_KINDS]


def benchmarks_dir() -> Path:
    """``$CLRP_BENCHMARKS_DIR``.

    Raises:
        SystemExit: the variable is not set, or its ``schneider/`` folder is missing.
    """
    value = os.environ.get("CLRP_BENCHMARKS_DIR")
    if not value or not (Path(value) / "schneider").is_dir():
        raise SystemExit("set CLRP_BENCHMARKS_DIR to the benchmarks folder (with schneider/)")
    return Path(value)


def dev_file(name: str) -> CLRPInstance:
    """Development file ``name`` (one of :func:`dev_names`), read from
    ``$CLRP_BENCHMARKS_DIR/schneider/<name>.json``.

    Raises:
        ValueError: ``name`` is not one of the 44 development files.
    """
    from clrp_rl4co.data.schneider import read_schneider

    if name not in dev_names():
        raise ValueError(f"{name}: not one of the 44 development files")
    return read_schneider(benchmarks_dir() / "schneider" / f"{name}.json")


def dev_kind(name: str) -> str:
    """``c`` (nearly free depots) or ``e`` (heterogeneous depots): the letter ending the name."""
    return name[-1]
