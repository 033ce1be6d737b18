"""DRLHQ-CF (clrp_rl4co/policies/cost_features.py): features from their definition, invariance
to the units of distance, money and demand, DRLHQ left unchanged, loading, a few POMO steps
on the mixed preset."""

import math
from pathlib import Path

import pytest
import torch
from lightning.pytorch.callbacks import Callback
from rl4co.utils.trainer import RL4COTrainer

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp import (
    CLRPGenerator,
    generate_dataset,
    instance_tensordict,
    load_dataset,
)
from clrp_rl4co.models import build_model, decode_batch
from clrp_rl4co.policies import (
    CLRPInitEmbedding,
    CostFeatureInitEmbedding,
    DRLHQCostPolicy,
    DRLHQPolicy,
    build_policy,
    load_policy,
    policy_class,
    policy_name,
)
from clrp_rl4co.policies.cost_features import (
    CUSTOMER_EXTRA,
    DEPOT_EXTRA,
    INSTANCE_EXTRA,
    RATIO_FLOOR,
)

TINY = dict(embed_dim=16, num_encoder_layers=1, num_heads=2, feedforward_hidden=32)


def _tiny_instance(**overrides):
    """2 depots, 3 customers; cost coordinates span 4 (x) by 2 (y): L = 4."""
    values = dict(
        locs=[[0.0, 0.0], [4.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 1.0]],
        depot_capacity=[30.0, 90.0],
        opening_cost=[8.0, 2.0],
        demand=[10.0, 20.0, 30.0],
        vehicle_capacity=40.0,
        vehicle_fixed_cost=2.0,
    )
    values.update(overrides)
    locs = torch.tensor(values.pop("locs"))[None]
    batch = {k: torch.as_tensor(v)[None] for k, v in values.items()}
    return instance_tensordict(locs, **batch)


def test_features_follow_their_definition():
    td = _tiny_instance()
    depot, customer = CostFeatureInitEmbedding.features(td)
    assert depot.shape == (1, 2, 4 + len(DEPOT_EXTRA) + len(INSTANCE_EXTRA))
    assert customer.shape == (1, 3, 3 + len(CUSTOMER_EXTRA) + len(INSTANCE_EXTRA))
    L, T, q, F = 4.0, 60.0, 40.0, 2.0
    # DRLHQ's own features come first, unchanged
    old = torch.cat([CLRPInitEmbedding.normalize_coordinates(td["locs"]), td["locs"]], -1)
    assert torch.allclose(depot[0, :, :2], old[0, :2, :2])
    assert torch.allclose(depot[0, :, 2:4], CLRPInitEmbedding.depot_features(td)[0])
    assert torch.allclose(customer[0, :, 2], torch.tensor([10.0, 20.0, 30.0]) / q)
    expected_depot = [
        [math.log1p(8 / L), math.log1p(30 / q), 30 / T],
        [math.log1p(2 / L), math.log1p(90 / q), 1.0],  # 90 > T: uncapacitated
    ]
    assert torch.allclose(depot[0, :, 4:7], torch.tensor(expected_depot))
    assert torch.allclose(customer[0, :, 3], torch.tensor([0.5, 1.0, 1.5]))  # d / mean d
    instance = [math.log1p(F / L), math.log1p(5 / L), math.log1p(120 / T), math.log(3) / 5]
    for row in (*depot[0, :, 7:], *customer[0, :, 4:]):
        assert torch.allclose(row, torch.tensor(instance))


def test_ratio_feature_is_continuous_where_drlhqs_jumps():
    """Identical depots: DRLHQ's min-max Q_i / O_i is 0.5 everywhere and jumps to [0, 1] under
    a 1% change of the opening costs; the variant's stays within 0.5 +- 0.05."""
    equal = _tiny_instance(depot_capacity=[50.0, 50.0], opening_cost=[4.0, 4.0])
    jitter = _tiny_instance(depot_capacity=[50.0, 50.0], opening_cost=[4.0 * 1.01, 4.0 * 0.99])
    drlhq = [CLRPInitEmbedding.depot_features(td)[0, :, 0] for td in (equal, jitter)]
    variant = [CostFeatureInitEmbedding.ratio_feature(td)[0] for td in (equal, jitter)]
    assert torch.equal(drlhq[0], torch.tensor([0.5, 0.5]))
    assert torch.equal(drlhq[1], torch.tensor([0.0, 1.0]))
    assert torch.equal(variant[0], torch.tensor([0.5, 0.5]))
    assert (variant[1] - 0.5).abs().max() < 0.05 and variant[1][0] < variant[1][1]
    # a spread of at least RATIO_FLOOR x mean: DRLHQ's value, bitwise
    spread = _tiny_instance(depot_capacity=[50.0, 50.0], opening_cost=[4.0, 6.0])
    assert torch.equal(
        CostFeatureInitEmbedding.ratio_feature(spread)[0],
        CLRPInitEmbedding.depot_features(spread)[0, :, 0],
    )
    # continuous at the floor: ratios 7 and 9, spread 2 = RATIO_FLOOR x mean 8
    at_floor = _tiny_instance(depot_capacity=[7.0, 9.0], opening_cost=[1.0, 1.0])  # 2 = 0.25 x 8
    assert torch.allclose(
        CostFeatureInitEmbedding.ratio_feature(at_floor)[0], torch.tensor([0.0, 1.0])
    )


def test_rounded_costs_multiply_the_distance_scale_by_100():
    rounded = _tiny_instance()
    rounded["rounded_costs"] = torch.tensor([True])
    plain = _tiny_instance()
    plain["cost_locs"] = 100 * plain["cost_locs"]
    assert torch.equal(
        CostFeatureInitEmbedding.distance_scale(rounded),
        CostFeatureInitEmbedding.distance_scale(plain),
    )
    assert CostFeatureInitEmbedding.distance_scale(rounded).item() == 400.0


def _scaled(td, distance: float = 1.0, demand: float = 1.0):
    """The same instances in other units: coordinates and costs x ``distance`` (money follows
    distance: an arc costs its length), demands and capacities x ``demand``."""
    out = td.clone()
    for key in ("locs", "cost_locs", "opening_cost", "vehicle_fixed_cost"):
        out[key] = td[key] * distance
    for key in ("demand", "depot_capacity", "vehicle_capacity"):
        out[key] = td[key] * demand
    return out


@pytest.fixture(scope="module")
def mixed_batch():
    return generate_dataset(CLRPGenerator(preset="mixed", num_loc=30), 16, seed=3)


def test_variant_embeddings_are_identical_in_any_unit(mixed_batch):
    torch.manual_seed(0)
    embed = CostFeatureInitEmbedding(32)
    base = embed(mixed_batch)
    # powers of two: every ratio is exact, so the embeddings are bitwise equal
    for distance, demand in ((4.0, 1.0), (1.0, 8.0), (0.25, 16.0), (1024.0, 0.5)):
        assert torch.equal(embed(_scaled(mixed_batch, distance, demand)), base)
    # any factor: equal up to float rounding
    for distance, demand in ((37.5, 1.0), (1.0, 3.3), (0.013, 77.0)):
        other = embed(_scaled(mixed_batch, distance, demand))
        assert torch.allclose(other, base, atol=1e-5, rtol=1e-5)
    # through the env and a whole policy: the same solutions
    env = CLRPEnv(check_actions=False)
    policy = DRLHQCostPolicy(**TINY).eval()
    a, parts_a, _ = decode_batch(policy, env, mixed_batch, "multistart_greedy")
    b, parts_b, _ = decode_batch(policy, env, _scaled(mixed_batch, 64.0, 4.0), "multistart_greedy")
    assert torch.equal(a, b)
    assert torch.allclose(parts_b["total"], 64.0 * parts_a["total"])


@pytest.mark.parametrize(
    "key,factor",
    [("vehicle_fixed_cost", 10.0), ("opening_cost", 10.0), ("cost_locs", 100.0)],
)
def test_the_variant_sees_what_drlhq_cannot(mixed_batch, key, factor):
    """F x 10, every O_i x 10, distances x 100: DRLHQ's input is unchanged (up to float
    rounding of the normalised Q_i / O_i), the variant's changes."""
    changed = mixed_batch.clone()
    changed[key] = mixed_batch[key] * factor
    torch.manual_seed(0)
    drlhq, variant = CLRPInitEmbedding(16), CostFeatureInitEmbedding(16)
    assert torch.allclose(drlhq(changed), drlhq(mixed_batch), atol=1e-6, rtol=0)
    assert not torch.allclose(variant(changed), variant(mixed_batch), atol=1e-4)


def test_capacity_against_demand_and_q_changes_the_variant(mixed_batch):
    torch.manual_seed(0)
    variant = CostFeatureInitEmbedding(16)
    base = variant(mixed_batch)
    more_q = mixed_batch.clone()
    more_q["vehicle_capacity"] = 2 * mixed_batch["vehicle_capacity"]
    assert not torch.allclose(variant(more_q), base, atol=1e-4)
    roomy = mixed_batch.clone()
    roomy["depot_capacity"] = 3 * mixed_batch["depot_capacity"]
    assert not torch.allclose(variant(roomy), base, atol=1e-4)


# Published per-instance costs of DRLHQ models on the first 4 instances of the published test
# sets (results/clrp20/clrp20_per_instance.csv and results/clrp100/clrp100_per_instance.csv,
# columns "DRLHQ x8" and "DRLHQ greedy"): the shipped drlhq_clrp20, and the drlhq_clrp100 that
# the clrp100 table was made with, kept where the clrp100 arms start from since a later one
# shipped.
PUBLISHED = {
    ("drlhq_clrp20", "clrp20", "multistart_greedy+aug8"): [
        16.246723313549282,
        13.786915034485615,
        14.230926802644088,
        14.539389095726872,
    ],
    ("results/imitation/clrp100/start/drlhq_clrp100", "clrp100", "greedy"): [
        70.64602574334353,
        67.30517499676286,
        60.096468533174274,
        54.9367329617472,
    ],
}


@pytest.mark.parametrize("key", list(PUBLISHED))
def test_paper_faithful_drlhq_is_unchanged(key):
    """Adding the variant leaves DRLHQ as it was: its shipped models still produce the
    published costs, with DRLHQ's own 4 + 3 input features."""
    model, preset, decode = key
    path = Path(__file__).resolve().parents[1] / f"datasets/{preset}_test_1000_seed777000.npz"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    root = Path(__file__).resolve().parents[1]
    policy = load_policy(str(root / model) if "/" in model else model).eval()
    assert type(policy) is DRLHQPolicy
    embed = policy.encoder.init_embedding
    assert type(embed) is CLRPInitEmbedding
    assert embed.init_embed_depot.in_features == 4 and embed.init_embed_customer.in_features == 3
    _, parts, _ = decode_batch(policy, CLRPEnv(check_actions=False), load_dataset(path)[:4], decode)
    assert torch.allclose(parts["total"], torch.tensor(PUBLISHED[key], dtype=torch.float64))


def test_from_drlhq_starts_exactly_where_drlhq_is():
    env = CLRPEnv(generator_params={"preset": "clrp20"}, check_actions=False)
    td = generate_dataset(env.generator, 4, seed=11)
    drlhq = load_policy("drlhq_clrp20").eval()
    variant = DRLHQCostPolicy.from_drlhq("drlhq_clrp20").eval()
    ratio = td["depot_capacity"] / td["opening_cost"]
    spread = ratio.amax(-1) - ratio.amin(-1)
    assert (spread >= RATIO_FLOOR * ratio.mean(-1)).all()  # the paper's instances: DRLHQ's ratio
    assert type(variant.encoder.init_embedding) is CostFeatureInitEmbedding
    a, parts_a, _ = decode_batch(drlhq, env, td, "multistart_greedy+aug8")
    b, parts_b, _ = decode_batch(variant, env, td, "multistart_greedy+aug8")
    assert torch.equal(a, b) and torch.equal(parts_a["total"], parts_b["total"])
    # the new columns are zero; the old ones are DRLHQ's
    weight = variant.encoder.init_embedding.init_embed_depot.weight
    assert torch.equal(weight[:, :4], drlhq.encoder.init_embedding.init_embed_depot.weight)
    assert not weight[:, 4:].any()
    with pytest.raises(ValueError, match="drlhq: need a DRLHQPolicy, got DRLHQCostPolicy"):
        DRLHQCostPolicy.from_drlhq(variant)


def test_registry_save_and_load(tmp_path, mixed_batch):
    assert policy_class("drlhqcf") is DRLHQCostPolicy
    assert policy_class("DRLHQCostPolicy") is DRLHQCostPolicy
    assert policy_name(DRLHQCostPolicy) == "drlhqcf" and policy_name(DRLHQPolicy) == "drlhq"
    torch.manual_seed(0)
    policy = build_policy("drlhqcf", **TINY).eval()
    policy.save_pretrained(tmp_path / "cf")
    loaded = load_policy(tmp_path / "cf").eval()
    assert type(loaded) is DRLHQCostPolicy
    env = CLRPEnv(check_actions=False)
    a, _, _ = decode_batch(policy, env, mixed_batch, "greedy")
    b, _, _ = decode_batch(loaded, env, mixed_batch, "greedy")
    assert torch.equal(a, b)
    with pytest.raises(ValueError, match="holds a DRLHQCostPolicy, not a DRLHQPolicy"):
        DRLHQPolicy.from_pretrained(tmp_path / "cf")


class _Losses(Callback):
    def __init__(self):
        self.losses = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.losses.append(float(outputs["loss"]))


def test_variant_trains_with_pomo_on_the_mixed_preset(tmp_path):
    torch.manual_seed(0)
    gen = CLRPGenerator(preset="mixed", mixed=dict(num_loc=(8, 12)))
    env = CLRPEnv(generator=gen, check_actions=False)
    policy = DRLHQCostPolicy(**TINY)
    model = build_model(
        env, policy, num_augment=1, batch_size=4, train_data_size=8, val_data_size=4
    )
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    losses = _Losses()
    trainer = RL4COTrainer(
        max_steps=3,
        accelerator="cpu",
        devices=1,
        precision="32-true",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[losses],
        default_root_dir=str(tmp_path),
    )
    trainer.fit(model)
    assert len(losses.losses) == 3 and all(math.isfinite(v) for v in losses.losses)
    key = "encoder.init_embedding.init_embed_depot.weight"
    new_columns = policy.state_dict()[key][:, 4:]
    assert not torch.equal(new_columns, before[key][:, 4:])  # the cost features get gradients
