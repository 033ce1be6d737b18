"""CLRPGenerator(preset="mixed"): ranges, feasibility, determinism, layouts, bad input."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp.dataset import dataset_checksum, generate_dataset, load_dataset
from clrp_rl4co.envs.clrp.generator import CLRPGenerator, ffd_feasible
from clrp_rl4co.envs.clrp.validity import check_instance_validity
from clrp_rl4co.mixed_preset import MixedRanges, mixed_num_depots

ROOT = Path(__file__).resolve().parents[1]
R = MixedRanges()


def _draws(count: int = 6, size: int = 300, **kwargs):
    gen = CLRPGenerator(preset="mixed", **kwargs)
    return [generate_dataset(gen, size, seed=seed) for seed in range(count)]


@pytest.fixture
def draws():
    # function scope (0.1 s): mutation testing maps a test to the code it runs, and a
    # module-scoped fixture would run the generator in the first test only
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
        (
            dict(mixed=dict(capacity_ratio=(0.5, 2.0))),
            r"^mixed\.capacity_ratio: need finite 1\.0 <= low <= high, got \(0\.5, 2\.0\)$",
        ),
        (
            dict(mixed=dict(opening_cost_spread=(0.0, 1.5))),
            r"^mixed\.opening_cost_spread: need finite 0\.0 <= low <= high <= 1\.0, got",
        ),
        (dict(mixed=dict(cluster_std=(0.0, 0.1))), r"^mixed\.cluster_std: need finite 0\.0 < low"),
        (dict(mixed=dict(opening_cost=(0.0, 1.0))), r"^mixed\.opening_cost: need finite 0\.0 <"),
        (dict(mixed=dict(capacity_weight=(0.0, 1.0))), r"^mixed\.capacity_weight: need finite"),
        (dict(mixed=dict(fixed_cost=(0.1, math.inf))), r"^mixed\.fixed_cost: need finite"),
        (dict(mixed=dict(fixed_cost=(math.nan, 1.0))), r"^mixed\.fixed_cost: need finite"),
        (dict(mixed=dict(fixed_cost=(2.0, 1.0))), r"^mixed\.fixed_cost: need finite"),
        (dict(mixed=dict(num_depots=(5, 2))), r"^mixed\.num_depots: need integers 1 <= low"),
        (dict(mixed=dict(num_depots=(0, 2))), r"^mixed\.num_depots: need integers 1 <= low"),
        (dict(mixed=dict(num_clusters=(0, 2))), r"^mixed\.num_clusters: need integers 1 <="),
        (
            dict(mixed=dict(layouts={"uniform": 1.0, "cluster": -0.5})),
            r"^mixed\.layouts: need finite non-negative weights",
        ),
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
        (
            dict(vehicle_capacity=100),
            r"^vehicle_capacity: not used by preset='mixed' \(got 100\); set its range in "
            r"mixed=dict\(\.\.\.\) \(MixedRanges\)$",
        ),
        (dict(min_demand=5), r"^min_demand: not used by preset='mixed' \(got 5\)"),
        (dict(max_demand=30), r"^max_demand: not used by preset='mixed'"),
        (dict(vehicle_fixed_cost=2.0), r"^vehicle_fixed_cost: not used by preset='mixed'"),
        (dict(min_depot_capacity=100), r"^min_depot_capacity: not used by preset='mixed'"),
        (dict(max_depot_capacity=500), r"^max_depot_capacity: not used by preset='mixed'"),
        (dict(min_opening_cost=1), r"^min_opening_cost: not used by preset='mixed'"),
        (dict(max_opening_cost=10), r"^max_opening_cost: not used by preset='mixed'"),
        (dict(depot_distribution="cluster"), r"^depot_distribution: not used by preset='mixed'"),
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
    with pytest.raises(ValueError, match=r"mixed\.capacity_ratio: 4 of 4 .*N=2, D=3") as info:
        gen(4)
    assert str(info.value).endswith("raise its low end or capacity_weight's, or use fewer depots")


def test_valid_range_boundaries():
    """Equal range ends, the smallest allowed values and probabilities 0 and 1 are valid."""
    ranges = MixedRanges(
        num_loc=(1, 1),
        num_depots=(1, 1),
        num_clusters=(1, 1),
        demand_low=(1, 1),
        demand_width=(0, 0),
        customers_per_route=(2.0, 2.0),
        opening_cost_spread=(0.0, 1.0),
        capacity_ratio=(1.0, 1.0),
        uncapacitated_factor=(1.0, 1.0),
        zero_fixed_cost=1.0,
        equal_opening_cost=0.0,
        uncapacitated=1,
        layouts={"cluster": 1.0, "mixed": 0.0},
    )
    assert ranges.num_depots == (1, 1) and ranges.customers_per_route == (2.0, 2.0)
    assert ranges.layouts == {"uniform": 0.0, "cluster": 1.0, "mixed": 0.0}
    td = generate_dataset(CLRPGenerator(preset="mixed", mixed=ranges), 4, seed=0)
    assert td["locs"].shape == (4, 2, 2) and (td["vehicle_capacity"] == 2).all()


def test_equal_but_not_identical_defaults_are_accepted():
    gen = CLRPGenerator(preset="mixed", vehicle_capacity=70, min_demand=10.0, max_demand=19)
    assert gen.preset_sampler.ranges == MixedRanges()


def _mixed(size, seed=0, **kwargs):
    mixed = kwargs.pop("mixed", {})
    return generate_dataset(CLRPGenerator(preset="mixed", mixed=mixed, **kwargs), size, seed)


def _groups(points: torch.Tensor, eps: float = 0.02) -> list[int]:
    """Group index of each point: points within ``eps`` of a group's first point join it."""
    dist = torch.cdist(points, points)
    group = [-1] * len(points)
    count = 0
    for i in range(len(points)):
        if group[i] < 0:
            for j in (dist[i] < eps).nonzero().flatten().tolist():
                if group[j] < 0:
                    group[j] = count
            count += 1
    return group


def _same_group(points: torch.Tensor, eps: float = 0.02) -> torch.Tensor:
    return torch.cdist(points, points) < eps


def test_clusters_per_instance():
    """k clusters per instance (k drawn per instance), customers spread over them
    independently in every instance."""
    tiny = dict(layouts={"cluster": 1.0}, cluster_std=(0.001, 0.001))
    td = _mixed(40, num_loc=60, num_depots=3, mixed=dict(num_clusters=(4, 4), **tiny))
    customers = td["locs"][:, 3:]
    counts = [max(_groups(c)) + 1 for c in customers]
    assert max(counts) <= 4 and sum(c == 4 for c in counts) >= 36  # two centres may touch
    # the assignment of customers to clusters differs between instances
    same = [_same_group(c) for c in customers]
    assert sum(torch.equal(same[0], s) for s in same[1:]) <= 2
    td = _mixed(40, num_loc=60, num_depots=3, mixed=dict(num_clusters=(1, 6), **tiny))
    counts = [max(_groups(c)) + 1 for c in td["locs"][:, 3:]]
    assert max(counts) <= 6 and len(set(counts)) >= 4


def test_cluster_spread_is_the_drawn_std_with_independent_offsets():
    one = dict(layouts={"cluster": 1.0}, num_clusters=(1, 1))
    td = _mixed(32, num_loc=80, num_depots=3, mixed=dict(cluster_std=(0.02, 0.02), **one))
    customers = td["locs"][:, 3:].double()
    std = customers.std(1).mean().item()  # per instance and axis, averaged
    assert 0.018 < std < 0.022
    # offsets from the centre drawn anew for every instance
    centred = customers - customers.mean(1, keepdim=True)
    assert (centred[0] - centred[1]).abs().max() > 0.01


def test_points_outside_the_square_are_redrawn_one_by_one():
    """A wide cluster puts many points outside: each is redrawn on its own (no two customers
    end up on the same spot); a very wide one is close to uniform over the square."""
    one = dict(layouts={"cluster": 1.0}, num_clusters=(1, 1))
    td = _mixed(32, num_loc=60, num_depots=3, mixed=dict(cluster_std=(0.3, 0.3), **one))
    customers = td["locs"][:, 3:]
    assert customers.min() > 0 and customers.max() < 1
    # exact pairwise distances (cdist's matrix-product shortcut rounds close pairs to 0)
    exact = "donot_use_mm_for_euclid_dist"
    dist = torch.cdist(customers, customers, compute_mode=exact) + torch.eye(60) * 10
    assert dist.min() > 1e-6
    td = _mixed(16, num_loc=50, num_depots=3, mixed=dict(cluster_std=(5.0, 5.0), **one))
    customers = td["locs"][:, 3:]
    assert customers.min() > 0 and customers.max() < 1
    assert abs(customers.mean().item() - 0.5) < 0.03
    assert abs(customers.std().item() - 0.2887) < 0.02  # uniform: 1 / sqrt(12)
    assert abs((customers < 0.5).float().mean().item() - 0.5) < 0.04


def test_layouts_are_drawn_per_instance_and_per_customer():
    td = _mixed(8, num_loc=50, num_depots=3, mixed=dict(layouts={"uniform": 1.0}))
    customers = td["locs"][:, 3:]
    assert (customers[0] - customers[1]).abs().max() > 0.1
    assert abs(customers.mean().item() - 0.5) < 0.03
    # "mixed": each customer clustered with probability 1/2, drawn per instance
    mixed = dict(layouts={"mixed": 1.0}, num_clusters=(2, 2), cluster_std=(0.001, 0.001))
    td = _mixed(20, num_loc=100, num_depots=3, mixed=mixed)
    near = [(_same_group(c, 0.01).sum(-1) > 1) for c in td["locs"][:, 3:]]  # in a cluster
    fraction = torch.stack(near).float().mean().item()
    assert 0.42 < fraction < 0.6  # 1/2, plus a few uniform customers that happen to be close
    assert sum(int((near[0] != m).sum()) > 20 for m in near[1:]) >= 17
    # the layout itself is drawn per instance: uniform ones and clustered ones in one batch
    td = _mixed(40, num_loc=60, num_depots=3, mixed=dict(layouts={"uniform": 1.0, "cluster": 1.0},
                                                         cluster_std=(0.001, 0.001)))  # fmt: skip
    clustered = [bool((_same_group(c, 0.01).sum(-1) > 1).float().mean() > 0.9)
                 for c in td["locs"][:, 3:]]  # fmt: skip
    assert 10 <= sum(clustered) <= 30


def test_demands_are_drawn_per_instance_over_the_whole_width():
    td = _mixed(20, num_loc=100, num_depots=5, mixed=dict(demand_low=(10, 10), demand_width=(5, 5)))
    for demand in td["demand"]:
        assert set(demand.tolist()) == set(range(10, 16))
    assert not torch.equal(td["demand"][0], td["demand"][1])
    td = _mixed(200, num_loc=30, num_depots=5, mixed=dict(demand_low=(5, 8), demand_width=(0, 3)))
    low, high = td["demand"].amin(-1), td["demand"].amax(-1)
    assert set(low.tolist()) == {5.0, 6.0, 7.0, 8.0}
    assert set((high - low).tolist()) == {0.0, 1.0, 2.0, 3.0}


def test_probabilities_hold_within_one_batch():
    """Zero fixed cost, equal opening costs and uncapacitated depots are drawn per instance:
    one batch has about the given fraction of each."""
    td = _mixed(600, num_loc=20, num_depots=4)
    zero = (td["vehicle_fixed_cost"] == 0).float().mean().item()
    assert abs(zero - R.zero_fixed_cost) < 0.05
    opening = td["opening_cost"]
    equal = (opening.amax(-1) == opening.amin(-1)).float().mean().item()
    assert abs(equal - R.equal_opening_cost) < 0.05
    cap = td["depot_capacity"]
    uncapacitated = ((cap.amax(-1) - cap.amin(-1)) <= 1e-6 * cap.amax(-1)).float().mean()
    assert abs(uncapacitated.item() - R.uncapacitated) < 0.06


def test_all_or_nothing_probabilities():
    mixed = dict(zero_fixed_cost=1.0, uncapacitated=1.0, uncapacitated_factor=(2.0, 2.5))
    td = _mixed(64, num_loc=30, num_depots=4, mixed=mixed)
    assert (td["vehicle_fixed_cost"] == 0).all()
    cap, total = td["depot_capacity"], td["demand"].sum(-1, keepdim=True)
    kappa = cap / total  # every depot alone serves everyone: Q_i = kappa T
    assert torch.allclose(kappa, kappa[:, :1].expand_as(kappa))
    assert kappa.min() >= 2.0 - 1e-5 and kappa.max() <= 2.5 + 1e-5
    assert kappa.min() < 2.1 and kappa.max() > 2.4
    mixed = dict(zero_fixed_cost=0.0, uncapacitated=0.0, capacity_ratio=(3.0, 3.0))
    td = _mixed(64, num_loc=30, num_depots=4, mixed=mixed)
    assert (td["vehicle_fixed_cost"] > 0).all()
    ratio = td["depot_capacity"].sum(-1) / td["demand"].sum(-1)
    assert torch.allclose(ratio, torch.full_like(ratio, 3.0))


def test_opening_costs_spread_per_depot_and_instance():
    td = _mixed(50, num_loc=30, num_depots=5,
                mixed=dict(equal_opening_cost=0.0, opening_cost_spread=(0.5, 0.5)))  # fmt: skip
    opening = td["opening_cost"]
    # O_i = o (1 + 0.5 u_i), u_i uniform in [-1, 1]: ratios up to 3, drawn per instance
    assert (opening.amax(-1) / opening.amin(-1)).max() <= 3 + 1e-4
    assert (opening.amax(-1) / opening.amin(-1)).max() > 2
    assert len(set(opening.argmin(-1).tolist())) == 5
    assert len(set(opening.argmax(-1).tolist())) == 5


def test_a_shifted_square_scales_by_its_side():
    """L = max_loc - min_loc is the distance unit, min_loc the square's corner."""
    gen = CLRPGenerator(preset="mixed", min_loc=2.0, max_loc=5.0, num_loc=50)
    assert gen.vehicle_fixed_cost == pytest.approx(R.fixed_cost[1] * 3)
    td = generate_dataset(gen, 200, seed=0)
    locs = td["locs"]
    assert locs.min() >= 2 and locs.max() <= 5 and locs.min() < 2.1 and locs.max() > 4.9
    fixed = td["vehicle_fixed_cost"]
    assert fixed.max() <= R.fixed_cost[1] * 3 and fixed.max() > R.fixed_cost[1] * 3 * 0.7
    assert fixed[fixed > 0].min() >= R.fixed_cost[0] * 3
    opening = td["opening_cost"]
    assert opening.max() <= R.opening_cost[1] * 3 * 1.5 and opening.max() > R.opening_cost[1]


@pytest.mark.parametrize(
    "former", ["clrp_rl4co.envs.clrp.generator", "clrp_rl4co.generators.mixed"]
)
def test_ranges_pickled_under_a_former_module_still_load(former, tmp_path):
    """Checkpoints written while the preset lived in the env folder or in
    ``clrp_rl4co/generators/`` pickle its ranges under that module; they load as
    :class:`MixedRanges` through :mod:`clrp_rl4co.policies.unpickling` (``load_checkpoint`` and the
    training's resume)."""
    import io
    import pickle

    from clrp_rl4co.models.training import MovedClassesCheckpointIO
    from clrp_rl4co.policies import unpickling
    from clrp_rl4co.policies.pretrained import load_checkpoint

    ranges = MixedRanges(num_loc=(20, 50))
    text = pickle.dumps(ranges, protocol=0)
    assert b"clrp_rl4co.mixed_preset\nMixedRanges" in text
    old = text.replace(b"clrp_rl4co.mixed_preset\n", former.encode() + b"\n")
    assert old != text
    assert unpickling.load(io.BytesIO(old)) == ranges
    path = tmp_path / "old.ckpt"
    torch.save({"ranges": ranges}, path, pickle_protocol=0, _use_new_zipfile_serialization=False)
    new = path.read_bytes()
    path.write_bytes(new.replace(b"clrp_rl4co.mixed_preset\n", former.encode() + b"\n"))
    assert path.read_bytes() != new
    assert load_checkpoint(path, weights_only=False)["ranges"] == ranges
    resumed = MovedClassesCheckpointIO().load_checkpoint(path, weights_only=False)
    assert resumed["ranges"] == ranges  # a training run resumed from such a checkpoint
