"""CLRPGenerator(preset="mixed"): ranges, feasibility, determinism, layouts, bad input."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp.generator import (
    CLRPGenerator,
    MixedRanges,
    dataset_checksum,
    ffd_feasible,
    generate_dataset,
    load_dataset,
    mixed_num_depots,
)
from clrp_rl4co.envs.clrp.validity import check_instance_validity

ROOT = Path(__file__).resolve().parents[1]
R = MixedRanges()


def _draws(count: int = 6, size: int = 300, **kwargs):
    gen = CLRPGenerator(preset="mixed", **kwargs)
    return [generate_dataset(gen, size, seed=seed) for seed in range(count)]


@pytest.fixture(scope="module")
def draws():
    return _draws()


def test_sizes_follow_the_ranges_and_vary_per_call(draws):
    sizes = set()
    for td in draws:
        n, d = td["demand"].shape[-1], td["depot_capacity"].shape[-1]
        assert R.num_loc[0] <= n <= R.num_loc[1]
        low, high = mixed_num_depots(n)
        assert low <= d <= high
        assert td["locs"].shape == (300, d + n, 2)
        sizes.add(n)
    assert len(sizes) >= 4  # drawn per call


def test_default_depot_range_rule():
    assert mixed_num_depots(20) == (3, 5)
    assert mixed_num_depots(100) == (5, 20)
    assert mixed_num_depots(200) == (10, 20)
    assert mixed_num_depots(1000) == (50, 50)


def test_demands_vehicle_capacity_and_costs_respect_the_ranges(draws):
    low_min, high_max = R.demand_bounds()
    for td in draws:
        demand, q = td["demand"], td["vehicle_capacity"][:, 0]
        assert torch.equal(demand, demand.round())
        lo, hi = demand.amin(-1), demand.amax(-1)
        assert lo.min() >= low_min and hi.max() <= high_max
        assert (hi - lo <= R.demand_width[1]).all()
        # q = ceil(r (a + w / 2)), r in [3, 16], for a range {a..a+w} (w <= 30) holding the
        # demands: a <= lo, a + w >= hi, so max(1, hi - 30) <= a and a + w / 2 <= lo + 15
        assert (q >= hi).all() and torch.equal(q, q.round())
        width = R.demand_width[1]
        assert (q <= torch.ceil(R.customers_per_route[1] * (lo + width / 2)) + 1e-3).all()
        smallest_mean = ((hi - width).clamp(min=1) + hi) / 2
        assert (q >= R.customers_per_route[0] * smallest_mean - 1e-3).all()
        fixed = td["vehicle_fixed_cost"][:, 0]
        positive = fixed[fixed > 0]
        assert positive.min() >= R.fixed_cost[0] - 1e-6 and fixed.max() <= R.fixed_cost[1]
        opening = td["opening_cost"]
        assert opening.min() >= R.opening_cost[0] * (1 - R.opening_cost_spread[1]) - 1e-6
        assert opening.max() <= R.opening_cost[1] * (1 + R.opening_cost_spread[1]) + 1e-4
        spread = opening.amax(-1) / opening.amin(-1)
        assert spread.max() <= (1 + 0.5) / (1 - 0.5) + 1e-4


def test_probabilities_of_zero_fixed_cost_and_uncapacitated_depots(draws):
    fixed = torch.cat([td["vehicle_fixed_cost"][:, 0] for td in draws])
    zero = (fixed == 0).float().mean().item()
    assert abs(zero - R.zero_fixed_cost) < 0.05
    opening = torch.cat([td["opening_cost"][:, :3] for td in draws])  # D >= 3
    equal = (opening.amax(-1) == opening.amin(-1)).float().mean().item()
    assert abs(equal - R.equal_opening_cost) < 0.05
    uncap, ratios = [], []
    for td in draws:
        cap, total = td["depot_capacity"], td["demand"].sum(-1, keepdim=True)
        # uncapacitated: every Q_i = kappa T, one kappa in [1, 3] (tight weights are never equal)
        equal = (cap.amax(-1) - cap.amin(-1)) <= 1e-6 * cap.amax(-1)
        uncap.append(equal)
        kappa = cap[equal, 0] / total[equal, 0]
        assert kappa.min() >= 1 - 1e-6 and kappa.max() <= 3 + 1e-5
        ratio = cap[~equal].sum(-1) / total[~equal, 0]
        ratios.append(ratio)
        share = cap[~equal] / cap[~equal].sum(-1, keepdim=True)
        assert (share.amax(-1) / share.amin(-1)).max() <= 1.5 / 0.5 + 1e-4
    fraction = torch.cat(uncap).float().mean().item()
    assert abs(fraction - R.uncapacitated) < 0.07
    ratios = torch.cat(ratios)
    assert ratios.min() >= R.capacity_ratio[0] - 1e-4 and ratios.max() <= R.capacity_ratio[1]
    assert (ratios < 1.3).any() and (ratios > 5).any()  # from tight to generous


def test_every_instance_is_feasible_and_the_env_runs_it(draws):
    for td in draws:
        check_instance_validity(td)
        assert ffd_feasible(td["demand"], td["depot_capacity"]).all()
    # tight capacities: redrawn until first-fit decreasing packs them
    tight = _draws(
        count=3,
        size=200,
        num_loc=100,
        num_depots=10,
        mixed=dict(capacity_ratio=(1.05, 1.1), uncapacitated=0),
    )
    for td in tight:
        check_instance_validity(td)
        assert ffd_feasible(td["demand"], td["depot_capacity"]).all()
        assert (td["depot_capacity"].sum(-1) / td["demand"].sum(-1)).max() <= 1.1 + 1e-5
    torch.manual_seed(0)
    env = CLRPEnv(generator_params=dict(preset="mixed"), check_actions=True)
    td = env.reset(batch_size=[16])
    while not td["done"].all():
        action = torch.multinomial(td["action_mask"].float(), 1).squeeze(-1)
        td.set("action", action)
        td = env.step(td)["next"]
    assert torch.isfinite(env.cost_parts(td)["total"]).all()


def test_determinism_under_seed():
    gen = CLRPGenerator(preset="mixed")
    a, b = generate_dataset(gen, 32, seed=7), generate_dataset(gen, 32, seed=7)
    c = generate_dataset(gen, 32, seed=8)

    def checksum(td):
        return dataset_checksum({k: td[k].numpy() for k in td.keys()})

    assert checksum(a) == checksum(b)
    assert checksum(a) != checksum(c)
    # the global RNG is left alone
    torch.manual_seed(3)
    before = torch.rand(1)
    torch.manual_seed(3)
    generate_dataset(gen, 8, seed=1)
    assert torch.equal(torch.rand(1), before)


def _mean_nearest_neighbour(locs: torch.Tensor) -> float:
    dist = torch.cdist(locs, locs)
    dist = dist + torch.eye(locs.shape[-2]) * 1e9
    return dist.amin(-1).mean().item()


def test_clustered_layout_is_clustered_and_never_clipped():
    common = dict(num_loc=100, num_depots=10)
    layouts = {}
    for layout in ("uniform", "cluster", "mixed"):
        gen = CLRPGenerator(
            preset="mixed",
            mixed=dict(layouts={layout: 1.0}, num_clusters=(2, 3), cluster_std=(0.03, 0.05)),
            **common,
        )
        td = generate_dataset(gen, 64, seed=0)
        customers = td["locs"][:, 10:]
        assert customers.min() > 0 and customers.max() < 1  # rejection, no pile-up at a border
        layouts[layout] = _mean_nearest_neighbour(customers)
    # uniform: about 0.5 / sqrt(N) = 0.05; 100 points in 2-3 clusters of std 0.03-0.05: far less
    assert 0.04 < layouts["uniform"] < 0.06
    assert layouts["cluster"] < 0.5 * layouts["uniform"]
    assert layouts["cluster"] < layouts["mixed"] < layouts["uniform"]


def test_coordinate_range_scales_costs_and_locations():
    gen = CLRPGenerator(preset="mixed", min_loc=0.0, max_loc=100.0, num_loc=50)
    td = generate_dataset(gen, 200, seed=0)
    assert td["locs"].min() >= 0 and td["locs"].max() <= 100 and td["locs"].max() > 90
    assert td["vehicle_fixed_cost"].max() <= 100 * R.fixed_cost[1]
    assert td["vehicle_fixed_cost"][td["vehicle_fixed_cost"] > 0].min() >= 100 * R.fixed_cost[0]
    assert td["opening_cost"].max() > 100 * 1.0  # in units of the square's side


def test_fixed_size_and_explicit_ranges():
    gen = CLRPGenerator(preset="mixed", num_loc=30, num_depots=4)
    assert not gen.draw_num_loc
    for seed in range(3):
        td = generate_dataset(gen, 8, seed=seed)
        assert td["demand"].shape == (8, 30) and td["depot_capacity"].shape == (8, 4)
    gen = CLRPGenerator(preset="mixed", mixed=MixedRanges(num_loc=(40, 40), num_depots=(7, 7)))
    td = gen(4)
    assert td["demand"].shape == (4, 40) and td["depot_capacity"].shape == (4, 7)
    q = generate_dataset(
        CLRPGenerator(
            preset="mixed", mixed=dict(customers_per_route=(10, 10), demand_width=(0, 0))
        ),
        16,
        seed=0,
    )
    # width 0: one demand a per instance, q = ceil(10 a)
    a = q["demand"][:, 0]
    assert torch.equal(q["demand"], a[:, None].expand_as(q["demand"]))
    assert torch.equal(q["vehicle_capacity"][:, 0], torch.ceil(10 * a))


def test_spec_bounds_and_paper_presets_untouched():
    gen = CLRPGenerator(preset="mixed")
    assert gen.num_loc == 200 and gen.draw_num_loc
    assert (gen.min_demand, gen.max_demand) == (1, 50)
    assert gen.vehicle_capacity == math.ceil(16 * 35)
    # the paper's presets draw exactly what the published test sets hold
    path = ROOT / "datasets" / "clrp20_test_1000_seed777000.npz"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    with np.load(path) as data:
        expected = str(data["meta_checksum"])
    td = generate_dataset(CLRPGenerator(preset="clrp20"), 1000, seed=777000)
    assert dataset_checksum({k: td[k].numpy() for k in td.keys()}) == expected
    assert torch.equal(load_dataset(path)["demand"], td["demand"])


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(mixed=dict(capacity_ratio=(0.5, 2.0))), r"mixed\.capacity_ratio: need finite 1"),
        (dict(mixed=dict(customers_per_route=(1.0, 3.0))), r"mixed\.customers_per_route"),
        (dict(mixed=dict(num_loc=(50, 20))), r"mixed\.num_loc: need integers 1 <= low"),
        (dict(mixed=dict(num_loc=(20.5, 30))), r"mixed\.num_loc"),
        (dict(mixed=dict(layouts={"ring": 1.0})), r"mixed\.layouts: .*unknown \['ring'\]"),
        (dict(mixed=dict(layouts={"cluster": 0.0})), r"mixed\.layouts: need finite"),
        (dict(mixed=dict(zero_fixed_cost=1.5)), r"mixed\.zero_fixed_cost: need a probability"),
        (dict(mixed=dict(equal_opening_cost=-0.1)), r"mixed\.equal_opening_cost: need a prob"),
        (dict(mixed=dict(opening_cost_spread=(0.0, 1.5))), r"mixed\.opening_cost_spread"),
        (dict(mixed=dict(fixed_cost=(0.0, 1.0))), r"mixed\.fixed_cost: need finite 0.0 < low"),
        (dict(mixed=dict(fixed_cost=3)), r"mixed\.fixed_cost: need a pair"),
        (dict(mixed=dict(foo=1)), r"mixed: unknown keys \['foo'\]"),
        (dict(vehicle_capacity=100), r"vehicle_capacity: not used by preset='mixed' \(got 100\)"),
        (dict(tight_capacity=(1.1, 1.2)), r"tight_capacity: not used by preset='mixed'"),
        (dict(loc_distribution="cluster"), r"loc_distribution: not used by preset='mixed'"),
    ],
)
def test_bad_ranges_raise_naming_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CLRPGenerator(preset="mixed", **kwargs)


def test_mixed_needs_its_preset_and_unknown_presets_list_it():
    with pytest.raises(ValueError, match="mixed: only read with preset='mixed'"):
        CLRPGenerator(preset="clrp20", mixed=dict(num_loc=(20, 30)))
    with pytest.raises(ValueError, match="preset: unknown preset 'mix'.*'mixed'"):
        CLRPGenerator(preset="mix")


def test_impossible_capacities_raise_naming_the_range():
    # 2 customers of demand >= T / 2 and 3 depots of T / 3 each: never packable, and the
    # redraws cannot change rho = 1 or the equal weights
    gen = CLRPGenerator(
        preset="mixed",
        num_loc=2,
        num_depots=3,
        mixed=dict(capacity_ratio=(1.0, 1.0), capacity_weight=(1.0, 1.0), uncapacitated=0),
    )
    with pytest.raises(ValueError, match=r"mixed\.capacity_ratio: 4 of 4 .*N=2, D=3"):
        gen(4)
