"""The DRLHQ paper's own test sets, regenerated from their seed and draw order.

The paper's synthetic tables were computed on test sets that its public repository
(``JackeyMiao/DRLHQ``) draws with ``data/gen_data.py``: ``torch.manual_seed(1234)``, then for each
instance in turn ``rand(D, 2)`` depot coordinates, ``rand(D)`` depot capacities and ``rand(D)``
opening costs (each scaled to its range), ``rand(N, 2)`` customer coordinates and
``randint(10, 20, (N,))`` demands; vehicle capacity 70 and vehicle cost 1. Files
``5_10_1000.pkl``, ``5_20_1000.pkl``, ``10_50_1000.pkl``, ``20_100_1000.pkl`` and
``<D>_<N>_100.pkl`` for 200 ... 500 customers.

:func:`draw_drlhq_test_set` makes the same calls on a private torch generator with the ranges of
this package's presets (the paper's), so the paper's figures (e.g. DRLHQ x8 8.6480 on clrp10) can
be compared on the same instances rather than on another sample of the distribution. What is not
verified: that the repository's ``.pkl`` files were written by this draw with these ranges (they
are binary and were not read here), and that torch's CPU generator gives the same numbers as the
torch version the authors used (it has been stable for ``rand`` / ``randint``). Treat a match with
the paper as strong evidence, not proof, that the instances are the same.

The regenerated sets are published like the package's own test sets (``datasets/``, ``.npz`` with
the seed and a pinned SHA-256), so a change of this code cannot silently change them.
"""

from __future__ import annotations

from pathlib import Path

import torch
from tensordict import TensorDict

from clrp_rl4co.envs.clrp import CLRPGenerator, instance_tensordict

from .published_sets import TEST_SET_SIZES, datasets_dir, load_or_draw

#: The seed of ``data/gen_data.py`` in the DRLHQ repository.
DRLHQ_TEST_SEED = 1234

#: Instances per test set in the DRLHQ repository (from its file names, ``5_10_1000.pkl`` ...
#: ``30_500_100.pkl``): the sizes the package's own test sets follow.
DRLHQ_TEST_SET_SIZES: dict[str, int] = dict(TEST_SET_SIZES)

#: SHA-256 of each regenerated set (:func:`clrp_rl4co.envs.clrp.dataset_checksum`), pinned when
#: the files were published.
DRLHQ_TEST_SET_CHECKSUMS: dict[str, str] = {
    "clrp10": "d63b26bc837060ee5d5eeae48e829e47e369fe9ee317c356b1559e415fe69d22",
    "clrp20": "db006dcc20308f0e08a84e8b6d6e417e12eb9294d9ca1345f437df3fd8d8b4a6",
    "clrp50": "a07f83425bd0ca11de3e57f10f992a272d2aef04e88edc517fba9570f780f861",
    "clrp100": "0cecd6abd8f2cc630707b40b96d5b783fd5bd102ed68aaa20af847cc83b56086",
    "clrp200": "94084e6499e390bf29481e442fd99878ff454a7446b97beecd4a65a1197db03f",
    "clrp300": "0d4a27726bd057dfdd1fbbc81724f85eba2d6f56516b7f900b854c932a2977d5",
    "clrp400": "20db4fa572e0eddd843cb159c1484fe1d4fad0c7189e536af26888087ed653f4",
    "clrp500": "e608c3ae3fd45b4d829e373794bbc0dff3ffd845b19bb0403f0e43c5a9ab7ddd",
}


def _require_preset(preset: str) -> None:
    if preset not in DRLHQ_TEST_SET_SIZES:
        raise ValueError(
            f"preset: the DRLHQ repository has no test set for {preset!r} "
            f"({list(DRLHQ_TEST_SET_SIZES)})"
        )


def drlhq_test_set_filename(preset: str) -> str:
    return f"drlhq_{preset}_test_{DRLHQ_TEST_SET_SIZES[preset]}_seed{DRLHQ_TEST_SEED}.npz"


def draw_drlhq_test_set(preset: str, size: int | None = None) -> TensorDict:
    """The DRLHQ repository's test set of ``preset`` (first ``size`` instances; default all).

    Returns an instance TensorDict of this package (depots first in ``locs``, raw coordinates in
    the unit square, capacities and opening costs real-valued as in the paper's files).
    """
    _require_preset(preset)
    total = DRLHQ_TEST_SET_SIZES[preset]
    size = total if size is None else size
    if not 1 <= size <= total:
        raise ValueError(f"size: must be in [1, {total}] for {preset}, got {size}")
    gen = CLRPGenerator(preset=preset)
    d, n = gen.num_depots, gen.num_loc
    cap_low, cap_span = gen.min_depot_capacity, gen.max_depot_capacity - gen.min_depot_capacity
    cost_low, cost_span = gen.min_opening_cost, gen.max_opening_cost - gen.min_opening_cost
    rng = torch.Generator().manual_seed(DRLHQ_TEST_SEED)
    locs, capacity, opening, demand = [], [], [], []
    for _ in range(size):  # one instance at a time, in the repository's order of calls
        depot_xy = torch.rand((d, 2), generator=rng)
        capacity.append(torch.rand(d, generator=rng) * cap_span + cap_low)
        opening.append(torch.rand(d, generator=rng) * cost_span + cost_low)
        customer_xy = torch.rand((n, 2), generator=rng)
        demand.append(torch.randint(gen.min_demand, gen.max_demand + 1, (n,), generator=rng))
        locs.append(torch.cat([depot_xy, customer_xy]))
    return instance_tensordict(
        torch.stack(locs),
        torch.stack(capacity),
        torch.stack(opening),
        torch.stack(demand),
        gen.vehicle_capacity,
        gen.vehicle_fixed_cost,
    )


def load_drlhq_test_set(
    preset: str, root: str | Path | None = None, write: bool = True
) -> TensorDict:
    """The regenerated DRLHQ test set of ``preset`` from ``root`` (default
    :func:`.published_sets.datasets_dir`), drawn and written when missing; its
    checksum must match the pinned one, else ``ValueError``."""
    _require_preset(preset)
    path = Path(root or datasets_dir()) / drlhq_test_set_filename(preset)
    return load_or_draw(
        path,
        lambda: draw_drlhq_test_set(preset),
        DRLHQ_TEST_SEED,
        DRLHQ_TEST_SET_CHECKSUMS.get(preset),
        write,
    )
