"""Presets, ranges, tight capacities, samplers and seeded datasets."""

import numpy as np
import pytest
import torch
from test_generator_rule import PAPER_TABLE
from torch.distributions import Uniform

from clrp_rl4co import CLRPEnv, CLRPGenerator
from clrp_rl4co.envs.clrp import (
    PRESETS,
    dataset_seed,
    generate_dataset,
    load_dataset,
    save_dataset,
)
from clrp_rl4co.envs.clrp.generator import ffd_feasible


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


#: explicit values for every size-derived setting: the rule (size_rule) is not consulted
EXPLICIT = dict(num_depots=3, min_depot_capacity=100, max_depot_capacity=300,
                min_opening_cost=1, max_opening_cost=5)  # fmt: skip


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_loc=0, **EXPLICIT), "num_loc: invalid value 0"),
        (dict(num_depots=0), "num_depots: invalid value 0"),
        (dict(min_loc=1.0, max_loc=1.0), "max_loc: invalid value 1.0"),
        (dict(min_loc=2.0, max_loc=1.0), "max_loc: invalid value 1.0"),
        (dict(min_demand=0), "min_demand: invalid value 0"),
        (dict(vehicle_fixed_cost=-0.5), "vehicle_fixed_cost: invalid value -0.5"),
        (dict(min_depot_capacity=-1), "min_depot_capacity: invalid value -1.0"),
        (dict(min_depot_capacity=9, max_depot_capacity=8), "max_depot_capacity: invalid value 8.0"),
        (dict(min_opening_cost=-1), "min_opening_cost: invalid value -1.0"),
        (dict(min_opening_cost=5, max_opening_cost=4), "max_opening_cost: invalid value 4.0"),
    ],
)  # fmt: skip
def test_each_bad_parameter_is_named(kwargs, message):
    with pytest.raises(ValueError, match="^" + message.replace(".", r"\.")):
        CLRPGenerator(**kwargs)


def test_boundary_values_are_valid():
    """Smallest sizes, a single demand value, a vehicle of exactly the largest demand, zero
    costs and equal range ends are all allowed."""
    td = CLRPGenerator(num_loc=1, num_depots=1)(2)
    assert td["locs"].shape == (2, 2, 2) and td["depot_capacity"].shape == (2, 1)
    td = CLRPGenerator(preset="clrp10", min_demand=12, max_demand=12, vehicle_capacity=12)(4)
    assert (td["demand"] == 12).all() and (td["vehicle_capacity"] == 12).all()
    td = CLRPGenerator(preset="clrp10", vehicle_fixed_cost=0, min_opening_cost=0,
                       max_opening_cost=0)(4)  # fmt: skip
    assert (td["vehicle_fixed_cost"] == 0).all() and (td["opening_cost"] == 0).all()
    td = CLRPGenerator(preset="clrp10", min_depot_capacity=200, max_depot_capacity=200)(4)
    assert (td["depot_capacity"] == 200).all()
    gen = CLRPGenerator(preset="clrp10", min_depot_capacity=0, max_depot_capacity=300)
    assert gen.min_depot_capacity == 0
    assert gen(4)["depot_capacity"].min() >= 0
    gen = CLRPGenerator(preset="clrp10", min_loc=-1.0, max_loc=-0.5)
    assert gen(2)["locs"].max() <= -0.5


def test_the_generator_records_its_preset_and_explicit_opening_costs():
    assert CLRPGenerator(preset="clrp50").preset == "clrp50"
    assert CLRPGenerator(preset=None).preset is None
    gen = CLRPGenerator(num_loc=20, min_opening_cost=2, max_opening_cost=3)
    assert (gen.min_opening_cost, gen.max_opening_cost) == (2.0, 3.0)
    opening = generate_dataset(gen, 64, seed=0)["opening_cost"]
    assert opening.min() >= 2 and opening.max() < 3


def test_coordinate_range_reaches_the_samplers():
    td = generate_dataset(CLRPGenerator(preset="clrp20", min_loc=2.0, max_loc=5.0), 32, seed=0)
    for part in (td["locs"][:, :5], td["locs"][:, 5:]):  # depots, customers
        assert part.min() >= 2 and part.max() <= 5
        assert part.min() < 2.2 and part.max() > 4.8


def test_sampler_arguments_reach_the_customer_and_depot_samplers():
    """RL4CO's samplers read ``<name>_<arg>`` keyword arguments: ``loc_*`` for customers,
    ``depot_*`` for depots."""
    gen = CLRPGenerator(preset="clrp20", loc_distribution="normal", loc_mean=0.3, loc_std=0.01,
                        depot_distribution="normal", depot_mean=0.7, depot_std=0.01)  # fmt: skip
    td = generate_dataset(gen, 16, seed=0)
    depots, customers = td["locs"][:, :5], td["locs"][:, 5:]
    assert abs(customers.mean().item() - 0.3) < 0.01 and customers.std().item() < 0.02
    assert abs(depots.mean().item() - 0.7) < 0.01 and depots.std().item() < 0.02


def test_given_sampler_objects_are_used():
    gen = CLRPGenerator(preset="clrp20", loc_sampler=Uniform(0.4, 0.5),
                        depot_sampler=Uniform(0.8, 0.9))  # fmt: skip
    td = generate_dataset(gen, 16, seed=0)
    depots, customers = td["locs"][:, :5], td["locs"][:, 5:]
    assert customers.min() >= 0.4 and customers.max() <= 0.5
    assert depots.min() >= 0.8 and depots.max() <= 0.9


def test_a_batch_with_several_dimensions():
    gen = CLRPGenerator(preset="clrp10")
    td = generate_dataset(gen, [3, 4], seed=0)
    assert td.batch_size == torch.Size([3, 4])
    assert td["locs"].shape == (3, 4, 15, 2) and td["depot_capacity"].shape == (3, 4, 5)
    assert td["demand"].shape == (3, 4, 10) and td["vehicle_capacity"].shape == (3, 4, 1)
    assert td["depot_capacity"].min() >= 100 and td["depot_capacity"].max() < 300
    # tight capacities: every instance's total is in its range times its total demand
    gen = CLRPGenerator(preset="clrp10", num_depots=7, tight_capacity=(1.5, 2.0))
    td = generate_dataset(gen, [5, 6], seed=1)
    assert td["depot_capacity"].shape == (5, 6, 7)
    ratio = td["depot_capacity"].sum(-1) / td["demand"].sum(-1)
    assert ratio.min() >= 1.5 - 1e-5 and ratio.max() <= 2.0 + 1e-5
    assert ratio.max() - ratio.min() > 0.2
    flat = td.reshape(-1)
    for demand, capacity in zip(flat["demand"], flat["depot_capacity"]):
        assert ffd_feasible(demand[None], capacity[None]).all()


def test_an_unservable_setting_counts_the_failing_instances_and_says_what_to_change():
    gen = CLRPGenerator(num_loc=50, min_depot_capacity=10, max_depot_capacity=20)
    with pytest.raises(ValueError) as info:
        gen(8)
    message = str(info.value)
    assert message.startswith("depot_capacity: 8 of 8 instances cannot be served")
    assert message.endswith("raise min_depot_capacity or tight_capacity's low end, or add depots")
    assert "demand in {10..19}" in message


# found by mutation testing: -inf was accepted (NaN coordinates), NaN was reported as
# a bad max_loc
@pytest.mark.parametrize("value", [float("-inf"), float("nan")])
def test_a_non_finite_min_loc_is_named(value):
    with pytest.raises(ValueError, match="^min_loc: invalid value"):
        CLRPGenerator(preset="clrp10", min_loc=value)
