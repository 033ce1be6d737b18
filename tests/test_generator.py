"""Presets, ranges, tight capacities, samplers and seeded datasets."""

import numpy as np
import pytest
import torch
from test_generator_rule import PAPER_TABLE

from clrp_rl4co import CLRPEnv, CLRPGenerator
from clrp_rl4co.envs.clrp import (
    PRESETS,
    dataset_seed,
    generate_dataset,
    load_dataset,
    save_dataset,
)


@pytest.mark.parametrize("preset", list(PAPER_TABLE))
def test_presets_follow_the_paper_distribution(preset):
    # expectations from the paper's table as written out in test_generator_rule.py, not PRESETS
    n, d, cap, cost = PAPER_TABLE[preset]
    assert preset in PRESETS
    td = generate_dataset(CLRPGenerator(preset=preset), 64, seed=0)
    assert td["locs"].shape == (64, d + n, 2)
    assert td["locs"].min() >= 0 and td["locs"].max() <= 1
    assert torch.equal(td["cost_locs"], td["locs"].double())
    demand = td["demand"]
    assert demand.shape == (64, n)
    assert torch.equal(demand, demand.round()) and demand.min() >= 10 and demand.max() <= 19
    # uniform over the ranges: inside them, and (64 x D draws) reaching near both ends
    for key, (low, high) in (("depot_capacity", cap), ("opening_cost", cost)):
        values = td[key]
        assert values.min() >= low and values.max() < high, key
        assert values.min() < low + 0.1 * (high - low), key
        assert values.max() > high - 0.1 * (high - low), key
    assert (td["vehicle_capacity"] == 70).all() and (td["vehicle_fixed_cost"] == 1).all()
    assert not td["rounded_costs"].any()


def test_demand_covers_both_ends_of_its_range():
    td = generate_dataset(CLRPGenerator(preset="clrp100"), 50, seed=0)
    assert set(td["demand"].unique().tolist()) == set(range(10, 20))


def test_explicit_arguments_override_the_preset():
    gen = CLRPGenerator(
        preset="clrp10",
        num_loc=7,
        num_depots=3,
        vehicle_capacity=50,
        min_depot_capacity=200,
        max_depot_capacity=210,
    )
    td = gen(4)
    assert td["locs"].shape == (4, 10, 2) and (td["vehicle_capacity"] == 50).all()
    assert td["depot_capacity"].min() >= 200


def test_unknown_preset_and_bad_parameters_raise():
    with pytest.raises(ValueError, match="preset: unknown preset 'clrp7'"):
        CLRPGenerator(preset="clrp7")
    with pytest.raises(ValueError, match="vehicle_capacity: invalid value 15"):
        CLRPGenerator(vehicle_capacity=15)
    with pytest.raises(ValueError, match="max_demand: invalid value 5"):
        CLRPGenerator(min_demand=10, max_demand=5)
    with pytest.raises(ValueError, match="tight_capacity"):
        CLRPGenerator(tight_capacity=(0.9, 1.1))
    # capacities that can never hold the demand: a parameter error naming the fields
    with pytest.raises(ValueError, match="depot_capacity: .*min_depot_capacity=1.0"):
        CLRPGenerator(preset="clrp10", min_depot_capacity=1, max_depot_capacity=2)(2)


def test_tight_capacity_ratio():
    td = CLRPGenerator(preset="clrp50", tight_capacity=(1.05, 1.2))(500)
    ratio = td["depot_capacity"].sum(-1) / td["demand"].sum(-1)
    assert ratio.min() >= 1.05 - 1e-5 and ratio.max() <= 1.2 + 1e-5
    assert ratio.max() - ratio.min() > 0.1


@pytest.mark.parametrize(
    "dist,kwargs", [("cluster", {"n_cluster": 3}), ("mixed", {"n_cluster_mix": 1})]
)
def test_rl4co_samplers_for_customers(dist, kwargs):
    gen = CLRPGenerator(preset="clrp20", loc_distribution=dist, **kwargs)
    td = gen(8)
    env = CLRPEnv(generator=gen)
    assert env.reset(td)["action_mask"].any(-1).all()
    assert td["locs"].min() >= 0 and td["locs"].max() <= 1


def test_dataset_is_seeded_and_checksummed(tmp_path):
    gen = CLRPGenerator(preset="clrp20")
    state = torch.random.get_rng_state()
    a = generate_dataset(gen, 10, seed=5)
    assert torch.equal(torch.random.get_rng_state(), state), "global RNG must be untouched"
    b = generate_dataset(gen, 10, seed=5)
    c = generate_dataset(gen, 10, seed=6)
    assert torch.equal(a["locs"], b["locs"]) and not torch.equal(a["locs"], c["locs"])
    path = tmp_path / "clrp20.npz"
    checksum = save_dataset(a, path, seed=5)
    assert len(checksum) == 64 and dataset_seed(path) == 5
    loaded = CLRPEnv.load_data(path)
    for key in a.keys():
        assert torch.equal(loaded[key], a[key]), key
    # RL4CO's dataset() goes through load_data
    env = CLRPEnv(generator=gen)
    ds = env.dataset(filename=str(path))
    assert len(ds) == 10
    # corrupt one value: the checksum catches it
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["demand"][0, 0] += 1
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match="checksum mismatch"):
        load_dataset(tmp_path / "bad.npz")
