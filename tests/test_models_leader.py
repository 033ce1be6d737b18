"""POMO with the leader reward (clrp_rl4co/models/leader.py): the advantage from its
definition, the loss against RL4CO's POMO, and building it."""

import math

import pytest
import torch
from rl4co.models import POMO
from test_imitation import TINY

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp import generate_dataset
from clrp_rl4co.models import LeaderRewardPOMO, algorithm_of, build_model, build_policy
from clrp_rl4co.models.leader import leader_advantage


def test_the_leaders_advantage_is_multiplied_and_the_others_keep_pomos():
    reward = torch.tensor([[1.0, 3.0, 2.0], [5.0, 5.0, 2.0]])
    # means 2 and 4: POMO's advantages [-1, 1, 0] and [1, 1, -2]; leaders: index 1 of the
    # first row, both tied 5s of the second
    expected = torch.tensor([[-1.0, 3.0, 0.0], [3.0, 3.0, -2.0]])
    assert torch.equal(leader_advantage(reward, 3.0), expected)
    assert torch.equal(leader_advantage(reward, 1.0), reward - reward.mean(-1, keepdim=True))


@pytest.fixture
def env():
    return CLRPEnv(generator_params={"preset": "clrp10"}, check_actions=False)


def test_the_loss_is_reinforce_on_the_leader_advantage_and_pomos_at_weight_one(env):
    reward = torch.tensor([[-10.0, -8.0, -9.0, -8.5], [-7.0, -7.5, -6.0, -9.0]])
    log_likelihood = torch.tensor([[-2.0, -1.0, -3.0, -0.5], [-1.5, -2.5, -0.25, -4.0]])
    policy = build_policy("drlhq", **TINY)
    model = LeaderRewardPOMO(env, policy, leader_weight=5.0)
    out = model.calculate_loss(None, {}, {}, reward, log_likelihood)
    # mean rewards -8.875 and -7.375; leaders -8.0 (row 0, index 1), -6.0 (row 1, index 2)
    advantage = torch.tensor(
        [[-1.125, 0.875 * 5, -0.125, 0.375], [0.375, -0.125, 1.375 * 5, -1.625]]
    )
    assert out["loss"].item() == pytest.approx(-(advantage * log_likelihood).mean().item())
    assert out["reinforce_loss"] is out["loss"]  # RL4CO's name of the REINFORCE term
    # RL4CO's signature: without the tensors, the loss reads them from the policy's output
    read = model.calculate_loss(None, {}, {"reward": reward, "log_likelihood": log_likelihood})
    assert read["loss"].item() == out["loss"].item()
    stock = POMO(env, policy=policy).calculate_loss(None, {}, {}, reward, log_likelihood)
    plain = LeaderRewardPOMO(env, policy, leader_weight=1.0)
    ours = plain.calculate_loss(None, {}, {}, reward, log_likelihood)
    assert ours["loss"].item() == pytest.approx(stock["loss"].item())


def test_a_training_step_with_the_leader_reward_moves_the_weights(env):
    torch.manual_seed(0)
    policy = build_policy("drlhq", **TINY)
    model = build_model(env, policy, algorithm="pomo", num_augment=1, leader_weight=4.0)
    assert isinstance(model, LeaderRewardPOMO) and model.leader_weight == 4.0
    assert algorithm_of(model) == "pomo"  # a POMO with another advantage
    assert model.num_augment == 1  # POMO's arguments reach POMO
    loss = model.shared_step(generate_dataset(env.generator, 3, 7), 0, phase="train")["loss"]
    assert math.isfinite(loss.item())
    loss.backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in policy.parameters())


def test_build_model_without_a_weight_is_pomo():
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    model = build_model(env, build_policy("drlhq", **TINY), algorithm="pomo")
    assert type(model) is POMO


@pytest.mark.parametrize("weight", [0.5, float("nan"), float("inf")])
def test_a_weight_below_one_or_not_finite_is_refused(env, weight):
    with pytest.raises(ValueError, match=r"leader_weight: must be a finite number >= 1, got"):
        LeaderRewardPOMO(env, build_policy("drlhq", **TINY), leader_weight=weight)


def test_the_leader_weight_is_pomos_option_only(env):
    with pytest.raises(ValueError, match="leader_weight: POMO's option, not 'reinforce''s"):
        build_model(env, build_policy("drlhq", **TINY), algorithm="reinforce", leader_weight=2.0)


# The eight symmetries of the unit square (the dihedral group), written from their definition.
DIHEDRAL = (
    lambda x, y: (x, y),
    lambda x, y: (y, x),
    lambda x, y: (1 - x, y),
    lambda x, y: (1 - y, x),
    lambda x, y: (x, 1 - y),
    lambda x, y: (y, 1 - x),
    lambda x, y: (1 - x, 1 - y),
    lambda x, y: (1 - y, 1 - x),
)


class RecordingPolicy(torch.nn.Module):
    """Stands in for a policy: records the states it is given and answers each rollout with a
    reward and a log likelihood drawn from a seeded generator, laid out as RL4CO's policies lay
    out multistart rollouts (start-major over the batch it was given)."""

    def __init__(self, env):
        super().__init__()
        self.env_expected = env
        self.weight = torch.nn.Parameter(torch.ones(()))
        self.seen = []
        # what POMO reads (and suffixes with "_multistart") of an RL4CO policy
        self.train_decode_type, self.val_decode_type = "sampling", "greedy"
        self.test_decode_type = "greedy"

    def forward(self, td, env, phase, num_starts, **kwargs):
        assert env is self.env_expected  # the model's env reaches the policy
        self.seen.append((td.clone(), num_starts))
        rows = td.batch_size[0] * num_starts
        draw = torch.Generator().manual_seed(rows)
        reward = -torch.rand(rows, generator=draw) * 10
        log_likelihood = -torch.rand(rows, generator=draw) * self.weight
        # the instance each rollout belongs to, read back from its (unaugmented) demand
        tag = td["demand"].sum(-1).repeat(num_starts)
        return {"reward": reward, "log_likelihood": log_likelihood, "tag": tag}


def test_training_over_augmentations_groups_each_instances_rollouts_on_all_eight_copies(env):
    batch = generate_dataset(env.generator, 3, 11)
    policy = RecordingPolicy(env)
    model = LeaderRewardPOMO(env, policy, leader_weight=4.0, train_augment=8, num_augment=1)
    kept = []
    original = model.calculate_loss

    def keep(td, batch_, policy_out, reward=None, log_likelihood=None):
        kept.append(policy_out)
        return original(td, batch_, policy_out, reward, log_likelihood)

    model.calculate_loss = keep
    loss = model.shared_step(batch, 0, phase="train")["loss"]
    (out,) = kept
    ((seen, starts),) = policy.seen
    assert starts == env.get_num_starts(env.reset(batch))
    assert seen.batch_size[0] == 3 * 8
    locs = env.reset(batch)["locs"]
    demands = env.reset(batch)["demand"].sum(-1)
    for b in range(3):
        copies = [seen["locs"][j] for j in range(24) if seen["demand"][j].sum() == demands[b]]
        assert len(copies) == 8
        x, y = locs[b][..., 0], locs[b][..., 1]
        for symmetry in DIHEDRAL:
            image = torch.stack(symmetry(x, y), dim=-1)
            assert sum(torch.allclose(c, image, atol=1e-6) for c in copies) == 1
    # the loss: each instance's 8 x N rollouts form one group (one baseline, one leader)
    reward, log_likelihood, tag = out["reward"], out["log_likelihood"], out["tag"]
    terms = []
    for b in range(3):
        mine = tag == demands[b]
        assert mine.sum() == 8 * starts
        terms.append(-(leader_advantage(reward[mine][None], 4.0) * log_likelihood[mine][None]))
    assert loss.item() == pytest.approx(torch.cat(terms, dim=-1).mean().item(), rel=1e-5)
    best = torch.stack([reward[tag == demands[b]].max() for b in range(3)])
    assert torch.equal(out["max_reward"], best)


def test_without_augmentation_a_training_step_sees_the_batch_as_given(env):
    batch = generate_dataset(env.generator, 3, 11)
    policy = RecordingPolicy(env)
    LeaderRewardPOMO(env, policy, leader_weight=4.0).shared_step(batch, 0, phase="train")
    ((seen, _),) = policy.seen
    assert seen.batch_size[0] == 3
    assert torch.equal(seen["locs"], env.reset(batch)["locs"])


def test_a_training_step_over_augmentations_moves_the_weights(env):
    torch.manual_seed(0)
    policy = build_policy("drlhq", **TINY)
    model = build_model(env, policy, algorithm="pomo", num_augment=1, train_augment=8)
    assert isinstance(model, LeaderRewardPOMO) and model.leader_weight == 1.0
    assert model.train_augment == 8
    loss = model.shared_step(generate_dataset(env.generator, 2, 7), 0, phase="train")["loss"]
    assert math.isfinite(loss.item())
    loss.backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in policy.parameters())


@pytest.mark.parametrize("count", [0, 2, 4, 16])
def test_training_augmentation_other_than_one_or_eight_copies_is_refused(env, count):
    with pytest.raises(ValueError, match=rf"train_augment: must be 1 or 8, got {count}"):
        LeaderRewardPOMO(env, build_policy("drlhq", **TINY), leader_weight=2.0, train_augment=count)


def test_training_augmentation_is_pomos_option_only(env):
    with pytest.raises(ValueError, match="train_augment: POMO's option, not 'reinforce''s"):
        build_model(env, build_policy("drlhq", **TINY), algorithm="reinforce", train_augment=8)


@pytest.mark.parametrize("feats", [None, []])
def test_training_decodes_the_copies_validation_decodes_and_the_starts_asked_for(env, feats):
    # the paper's 45-degree rotations instead of the dihedral eight, and 3 starts, not N; with
    # no features named to transform, eight untransformed copies
    batch = generate_dataset(env.generator, 2, 5)
    policy = RecordingPolicy(env)
    model = build_model(
        env,
        policy,
        algorithm="pomo",
        augment="rotate45",
        train_augment=8,
        leader_weight=2.0,
        num_starts=3,
        feats=feats,
    )
    model.shared_step(batch, 0, phase="train")
    ((seen, starts),) = policy.seen
    assert starts == 3
    validation = model.augment(env.reset(batch))
    assert torch.allclose(seen["locs"], validation["locs"])
    copies_moved = not torch.allclose(seen["locs"][:2], seen["locs"][2:4])
    assert copies_moved == (feats is None)


def test_outside_training_the_step_is_pomos_with_the_dataloaders_name(env):
    # validation names a metric after its dataloader, as RL4CO's POMO does
    batch = generate_dataset(env.generator, 2, 5)
    policy = build_policy("drlhq", **TINY)
    model = build_model(env, policy, algorithm="pomo", train_augment=8, num_augment=1)
    model.dataloader_names = ["first", "second"]
    metrics = model.shared_step(batch, 0, phase="val", dataloader_idx=1)
    assert set(metrics) == {"loss", "val/reward/second", "val/max_reward/second"}
    assert metrics["loss"] is None  # no loss outside training


def test_training_copies_follow_validations_first_copy_rule(env):
    # RL4CO's first_aug_identity changes validation's copies; training decodes the same ones,
    # which are not the copies of the default rule
    batch = generate_dataset(env.generator, 2, 5)
    policy = RecordingPolicy(env)
    model = LeaderRewardPOMO(
        env, policy, leader_weight=2.0, train_augment=8, first_aug_identity=False
    )
    model.shared_step(batch, 0, phase="train")
    ((seen, _),) = policy.seen
    drawn = env.reset(batch)
    assert torch.allclose(seen["locs"], model.augment(drawn)["locs"])
    default = LeaderRewardPOMO(env, RecordingPolicy(env), leader_weight=2.0).augment(drawn)
    assert not torch.allclose(seen["locs"], default["locs"])
