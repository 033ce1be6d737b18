"""The size rule of the generator: any ``num_loc``, paper presets kept, feasible batches."""

import math

import pytest
import torch

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp import PRESETS, CLRPGenerator, generate_dataset
from clrp_rl4co.envs.clrp.generator import _RuleDefault, ffd_feasible, size_rule

#: The DRLHQ paper's table, written out (customers, depots, capacity range, opening-cost range).
PAPER_TABLE = {
    "clrp10": (10, 5, (100, 300), (1, 5)),
    "clrp20": (20, 5, (100, 300), (1, 5)),
    "clrp50": (50, 10, (130, 450), (1, 5)),
    "clrp100": (100, 20, (500, 900), (5, 15)),
    "clrp200": (200, 20, (500, 900), (5, 15)),
    "clrp300": (300, 20, (500, 900), (5, 15)),
    "clrp400": (400, 30, (500, 900), (5, 15)),
    "clrp500": (500, 30, (500, 900), (5, 15)),
}


def plain_ffd(demand: list[float], capacity: list[float]) -> bool:
    """First-fit decreasing, one instance, plain Python (the reference for the tests)."""
    remaining = list(capacity)
    for item in sorted(demand, reverse=True):
        for i, left in enumerate(remaining):
            if left >= item:
                remaining[i] = left - item
                break
        else:
            return False
    return True


def assert_all_ffd_feasible(td, sample: int | None = None) -> None:
    idx = range(td.batch_size[0]) if sample is None else range(min(sample, td.batch_size[0]))
    for b in idx:
        demand, capacity = td["demand"][b].tolist(), td["depot_capacity"][b].tolist()
        assert plain_ffd(demand, capacity), f"instance {b} cannot be packed"


@pytest.mark.parametrize("name", list(PAPER_TABLE))
def test_rule_reproduces_each_paper_preset(name):
    n, depots, cap, cost = PAPER_TABLE[name]
    assert size_rule(n) == dict(num_depots=depots, depot_capacity=cap, opening_cost=cost)
    assert PRESETS[name] == dict(num_loc=n, num_depots=depots, depot_capacity=cap,
                                 opening_cost=cost)  # fmt: skip
    for gen in (CLRPGenerator(preset=name), CLRPGenerator(num_loc=n)):
        assert (gen.num_loc, gen.num_depots) == (n, depots)
        assert (gen.min_depot_capacity, gen.max_depot_capacity) == cap
        assert (gen.min_opening_cost, gen.max_opening_cost) == cost


@pytest.mark.parametrize(
    "n, depots",
    [(1, 5), (15, 5), (21, 10), (49, 10), (51, 20), (250, 20), (301, 30), (499, 30),
     (501, 31), (700, 42), (1000, 60), (2000, 120)],
)  # fmt: skip
def test_rule_between_and_beyond_the_presets(n, depots):
    rule = size_rule(n)
    assert rule["num_depots"] == depots
    # the documented sufficient condition for first-fit: D * min capacity >= (N + D) * 19
    assert rule["num_depots"] * rule["depot_capacity"][0] >= (n + depots) * 19


def test_rule_rejects_a_size_below_one():
    with pytest.raises(ValueError, match="num_loc: invalid value 0"):
        size_rule(0)
    with pytest.raises(ValueError, match="num_loc: invalid value 0"):
        CLRPGenerator(num_loc=0)


#: batch per size: 1000 up to N = 200, smaller above to keep the suite fast (the full
#: 1000 x 1000 draw was run by hand); the plain-Python check covers a sample of each batch.
SIZES = [(10, 1000, 5), (20, 1000, 5), (50, 1000, 10), (100, 1000, 20), (200, 1000, 20),
         (500, 200, 30), (1000, 100, 60)]  # fmt: skip


@pytest.mark.parametrize("n, batch, depots", SIZES)
def test_any_size_draws_a_feasible_batch(n, batch, depots):
    td = generate_dataset(CLRPGenerator(num_loc=n), batch, seed=n)
    assert td["locs"].shape == (batch, depots + n, 2)
    assert td["depot_capacity"].shape == td["opening_cost"].shape == (batch, depots)
    low, high = (100, 300) if n <= 20 else (130, 450) if n <= 50 else (500, 900)
    assert td["depot_capacity"].min() >= low and td["depot_capacity"].max() < high
    assert td["demand"].min() >= 10 and td["demand"].max() <= 19
    assert (td["depot_capacity"].sum(-1) >= td["demand"].sum(-1)).all()
    assert_all_ffd_feasible(td, sample=200 if n <= 200 else 20)


def test_ffd_feasible_agrees_with_plain_python():
    torch.manual_seed(0)
    demand = torch.randint(10, 20, (400, 12)).float()
    capacity = 20 + 50 * torch.rand(400, 4)  # total around demand: both outcomes occur
    got = ffd_feasible(demand, capacity)
    want = torch.tensor([plain_ffd(d.tolist(), c.tolist()) for d, c in zip(demand, capacity)])
    assert torch.equal(got, want)
    assert want.any() and not want.all()
    # extra batch dimensions are kept
    assert torch.equal(ffd_feasible(demand.view(20, 20, 12), capacity.view(20, 20, 4)),
                       want.view(20, 20))  # fmt: skip


def test_a_draw_without_redraws_consumes_the_rng_as_the_plain_draw():
    """No failure, no extra random numbers: depot xy, customer xy, demand, capacity, cost."""
    n, d, b = 50, 10, 64
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)
        td = CLRPGenerator(num_loc=n)(b)
        after = torch.rand(1)
        torch.manual_seed(3)
        depot_xy, customer_xy = torch.rand(b, d, 2), torch.rand(b, n, 2)
        demand = torch.randint(10, 20, (b, n)).float()
        capacity = 130 + (450 - 130) * torch.rand(b, d)
        opening = 1 + (5 - 1) * torch.rand(b, d)
        expected_after = torch.rand(1)
    assert torch.equal(td["locs"], torch.cat([depot_xy, customer_xy], dim=1))
    assert torch.equal(td["demand"], demand)
    assert torch.allclose(td["depot_capacity"], capacity)
    assert torch.allclose(td["opening_cost"], opening)
    assert torch.equal(after, expected_after)


def test_num_loc_changed_in_place_changes_the_derived_values():
    """RL4CO's Reptile callback sets ``generator.num_loc`` after construction."""
    gen = CLRPGenerator()  # clrp20
    assert gen.num_depots == 5
    gen.num_loc = 50
    td = gen(16)
    assert td["locs"].shape == (16, 10 + 50, 2) and td["depot_capacity"].shape == (16, 10)
    assert td["depot_capacity"].min() >= 130 and td["depot_capacity"].max() < 450
    gen.num_loc = 1000
    td = gen(2)
    assert td["depot_capacity"].shape == (2, 60) and td["opening_cost"].min() >= 5
    assert_all_ffd_feasible(td)


def test_explicit_arguments_win_over_the_rule():
    gen = CLRPGenerator(num_loc=100, num_depots=7, min_depot_capacity=600)
    td = gen(32)
    assert td["depot_capacity"].shape == (32, 7)
    assert td["depot_capacity"].min() >= 600 and td["depot_capacity"].max() < 900  # rule's max
    gen.num_loc = 150  # still 7 depots: the user's value is not re-derived
    assert gen(4)["depot_capacity"].shape == (4, 7)
    gen.num_depots = None  # back to the rule
    assert gen.num_depots == 20


def test_num_loc_wins_over_preset_and_a_preset_equals_its_size():
    gen = CLRPGenerator(preset="clrp10", num_loc=50)
    assert (gen.num_loc, gen.num_depots, gen.min_depot_capacity) == (50, 10, 130)
    a = generate_dataset(CLRPGenerator(preset="clrp50"), 20, seed=9)
    b = generate_dataset(CLRPGenerator(num_loc=50), 20, seed=9)
    c = generate_dataset(CLRPGenerator(preset="clrp500", num_loc=50), 20, seed=9)
    for key in a.keys():
        assert torch.equal(a[key], b[key]) and torch.equal(a[key], c[key]), key


@pytest.mark.parametrize(
    "kwargs, low, high",
    [
        (dict(preset="clrp10", tight_capacity=(1.0, 1.1)), None, None),
        (dict(preset="clrp20", tight_capacity=(1.0, 1.1)), None, None),
        (dict(num_loc=20, num_depots=5, min_depot_capacity=50, max_depot_capacity=90), 50, 90),
    ],
)
def test_settings_where_packing_can_fail_return_only_feasible_instances(kwargs, low, high):
    gen = CLRPGenerator(**kwargs)
    # such a setting does produce unpackable capacities when drawn plainly
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        demand = torch.randint(10, 20, (300, gen.num_loc)).float()
        raw = gen.min_depot_capacity + (
            gen.max_depot_capacity - gen.min_depot_capacity
        ) * torch.rand(300, gen.num_depots)
        if gen.tight_capacity is not None:
            t_low, t_high = gen.tight_capacity
            ratio = t_low + (t_high - t_low) * torch.rand(300, 1)
            raw = raw / raw.sum(-1, keepdim=True) * demand.sum(-1, keepdim=True) * ratio
    plain = [plain_ffd(d.tolist(), c.tolist()) for d, c in zip(demand, raw)]
    assert not all(plain)
    td = generate_dataset(gen, 300, seed=0)
    assert_all_ffd_feasible(td)
    assert td["demand"].min() >= 10 and td["demand"].max() <= 19
    assert td["demand"].shape == (300, gen.num_loc)
    if low is not None:
        assert td["depot_capacity"].min() >= low and td["depot_capacity"].max() < high
    else:
        ratio = td["depot_capacity"].sum(-1) / td["demand"].sum(-1)
        assert ratio.min() >= 1.0 - 1e-5 and ratio.max() <= 1.1 + 1e-5


def test_an_impossible_setting_raises_naming_the_fields():
    with pytest.raises(ValueError, match=r"num_depots=5.*tight_capacity=\(1.0, 1.0\)"):
        CLRPGenerator(preset="clrp10", tight_capacity=(1.0, 1.0))(8)
    with pytest.raises(ValueError, match="min_depot_capacity=10.0, max_depot_capacity=20.0"):
        CLRPGenerator(num_loc=50, min_depot_capacity=10, max_depot_capacity=20)(8)


def test_env_with_num_loc_resets_and_a_random_rollout_finishes():
    torch.manual_seed(0)
    env = CLRPEnv(generator_params=dict(num_loc=50))
    td = env.reset(batch_size=[64])
    assert td["depot_capacity"].shape == (64, 10) and td["demand"].shape == (64, 50)
    for _ in range(20 * (50 + 10)):
        if td["done"].all():
            break
        action = torch.multinomial(td["action_mask"].float(), 1).squeeze(-1)
        td.set("action", action)
        td = env.step(td)["next"]
    assert td["done"].all()
    reward = env.get_reward(td, None)
    assert reward.shape == (64,) and all(math.isfinite(r) for r in reward.tolist())


def test_a_subclass_declaring_the_rule_attributes_again_behaves_the_same():
    """The size-derived attributes are descriptors: declared in a subclass (here, at test
    time), they still follow the rule, keep explicit values, and let preset "mixed" see an
    explicit ``num_depots``."""

    class Generator(CLRPGenerator):
        num_depots = _RuleDefault("num_depots", None, int)
        min_depot_capacity = _RuleDefault("depot_capacity", 0)
        max_opening_cost = _RuleDefault("opening_cost", 1)

    gen = Generator(num_loc=50)
    assert (gen.num_depots, gen.min_depot_capacity, gen.max_opening_cost) == (10, 130.0, 5.0)
    assert isinstance(gen.num_depots, int) and isinstance(gen.min_depot_capacity, float)
    gen.num_loc = 400
    assert (gen.num_depots, gen.min_depot_capacity, gen.max_opening_cost) == (30, 500.0, 15.0)
    gen.num_loc, gen.num_depots = 50, "7"
    assert gen.num_depots == 7 and gen(2)["depot_capacity"].shape == (2, 7)
    assert isinstance(Generator.__dict__["num_depots"], _RuleDefault)
    mixed = Generator(preset="mixed", num_loc=100, num_depots=4)  # the range would be 5-20
    assert mixed(3)["depot_capacity"].shape == (3, 4)
