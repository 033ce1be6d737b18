"""Imitation (clrp_rl4co.models.imitation): equivalent forms of a solution keep its cost, the
loss is the policy's log-likelihood of the given actions, a few steps fit a fixed batch, and its
checkpoints start RL."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from omegaconf import OmegaConf
from rl4co.models import POMO
from rl4co.models.zoo.am import AttentionModelPolicy
from rl4co.utils.trainer import RL4COTrainer
from rollout import oracle_costs, random_rollout
from tensordict import TensorDict

from clrp_rl4co.data import CLRPSolution
from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.models import PolicyConfigCallback, build_model, build_policy, load_policy, training
from clrp_rl4co.models.equivalence import (
    augment_expert_batch,
    dihedral_locs,
    equivalent_actions,
    random_equivalent_actions,
)
from clrp_rl4co.models.expert_data import ExpertDataset
from clrp_rl4co.models.imitation import Imitation, teacher_forced_log_likelihood
from clrp_rl4co.policies import DRLHQCostPolicy, clrp_embeddings
from experiments.labels.shards import Shard, expert_dataset, expert_datasets, write_shard

TINY = dict(embed_dim=16, num_encoder_layers=1, num_heads=2, feedforward_hidden=32)


def expert_data(preset: str, size: int, seed: int, rounded: bool = False) -> ExpertDataset:
    """``size`` instances of ``preset`` with a uniformly random feasible solution each (the
    "expert" of these tests; dead-ended rollouts are drawn again)."""
    env = CLRPEnv(generator_params={"preset": preset})
    torch.manual_seed(seed)
    instances = env.generator(4 * size)
    if rounded:
        instances["rounded_costs"] = torch.ones(4 * size, dtype=torch.bool)
    actions, final = random_rollout(env, instances, seed=seed)
    keep = (~final["infeasible"]).nonzero().squeeze(-1)[:size]
    assert keep.numel() == size
    return ExpertDataset(instances[keep], actions[keep])


def oracle_totals(instances: TensorDict, actions: torch.Tensor) -> np.ndarray:
    """Cost of every row by the test oracle (the CLRP objective from its definition)."""
    return oracle_costs(instances, actions).sum(-1)


def env_totals(instances: TensorDict, actions: torch.Tensor) -> np.ndarray:
    env = CLRPEnv(check_solution=False)
    return env.cost_parts(env.rollout_actions(instances, actions))["total"].numpy()


# ---------------------------------------------------------------- equivalent forms
def test_route_order_and_direction_by_hand():
    # D = 2; route A: depot 0 serves customers 0, 1 (nodes 2, 3); route B: depot 1 serves 2
    actions = [0, 2, 3, 0, 1, 4, 1, 0, 0]  # trailing padding
    assert equivalent_actions(actions, 2, order=[1, 0], reverse=[True, False]) == [
        1, 4, 1, 0, 3, 2, 0,
    ]  # fmt: skip
    assert equivalent_actions(actions, 2, order=[0, 1], reverse=[False, False]) == actions[:7]


@pytest.mark.parametrize("order,reverse", [([0, 0], [False, False]), ([0, 1], [True])])
def test_a_wrong_permutation_is_refused(order, reverse):
    with pytest.raises(ValueError, match="order|reverse"):
        equivalent_actions([0, 2, 0, 1, 3, 1], 2, order=order, reverse=reverse)


@pytest.mark.parametrize("preset,rounded", [("clrp10", False), ("clrp20", True)])
def test_random_equivalent_sequences_replay_to_the_oracle_cost(preset, rounded):
    data = expert_data(preset, 6, seed=3, rounded=rounded)
    expected = oracle_totals(data.instances, data.actions)
    gen = torch.Generator().manual_seed(0)
    num_depots = data.instances["depot_capacity"].shape[-1]
    for _ in range(3):
        rows = [random_equivalent_actions(r, num_depots, gen) for r in data.actions.tolist()]
        assert [len(r) for r in rows] == [
            len(CLRPSolution.from_actions(r, num_depots).to_actions(num_depots))
            for r in data.actions.tolist()
        ]
        length = max(len(r) for r in rows)
        padded = torch.tensor([r + [0] * (length - len(r)) for r in rows])
        np.testing.assert_allclose(env_totals(data.instances, padded), expected, rtol=1e-9)


def test_random_forms_change_the_sequence():
    data = expert_data("clrp20", 4, seed=5)
    gen = torch.Generator().manual_seed(1)
    num_depots = data.instances["depot_capacity"].shape[-1]
    row = data.actions[0].tolist()
    unpadded = CLRPSolution.from_actions(row, num_depots).to_actions(num_depots)
    forms = {tuple(random_equivalent_actions(row, num_depots, gen)) for _ in range(20)}
    assert len(forms) > 1 and tuple(unpadded) in forms | {tuple(unpadded)}


def test_dihedral_members_are_eight_isometries_of_the_unit_square():
    locs = torch.rand(1, 7, 2)
    images = torch.cat([dihedral_locs(locs, torch.tensor([k])) for k in range(8)])
    assert torch.equal(images[0], locs[0])  # member 0: the identity
    dist = torch.cdist(locs[0], locs[0])
    for image in images:
        torch.testing.assert_close(torch.cdist(image, image), dist, atol=1e-6, rtol=0)
        assert bool(((image >= 0) & (image <= 1)).all())
    assert len({tuple(image.flatten().tolist()) for image in images}) == 8
    with pytest.raises(ValueError, match="member"):
        dihedral_locs(locs, torch.tensor([8]))


def test_augmented_batch_keeps_the_cost_and_leaves_the_inputs_alone():
    data = expert_data("clrp10", 6, seed=7)
    instances = data.instances.exclude("cost_locs")  # the env prices locs then
    before = instances["locs"].clone(), data.actions.clone()
    expected = oracle_totals(data.instances, data.actions)
    torch.manual_seed(0)
    inst, acts = augment_expert_batch(instances, data.actions)
    assert torch.equal(instances["locs"], before[0]) and torch.equal(data.actions, before[1])
    assert "cost_locs" not in instances.keys()
    assert not torch.equal(inst["locs"], instances["locs"])  # 6 rows: some member is not 0
    np.testing.assert_allclose(env_totals(inst, acts), expected, rtol=1e-9)


# ---------------------------------------------------------------- the dataset
def test_expert_dataset_refuses_bad_input():
    data = expert_data("clrp10", 2, seed=1)
    with pytest.raises(ValueError, match="2 sequences for 1 instances"):
        ExpertDataset(data.instances[:1], data.actions)
    with pytest.raises(ValueError, match="node index 99"):
        ExpertDataset(data.instances, torch.full_like(data.actions, 99))
    with pytest.raises(ValueError, match="missing arrays \\['demand'\\]"):
        ExpertDataset(data.instances.exclude("demand"), data.actions)
    with pytest.raises(ValueError, match="different sizes"):
        ExpertDataset.concatenate([data, expert_data("clrp20", 2, seed=1)])


def test_concatenated_datasets_pad_to_the_longest_sequence():
    a, b = expert_data("clrp10", 2, seed=1), expert_data("clrp10", 3, seed=2)
    both = ExpertDataset.concatenate([a, b])
    assert len(both) == 5
    length = max(a.actions.shape[1], b.actions.shape[1])
    assert both.actions.shape == (5, length)
    batch = both.__getitems__([4, 0])
    assert torch.equal(batch["demand"][0], b.instances["demand"][2])
    np.testing.assert_allclose(
        env_totals(both.instances, both.actions),
        np.concatenate(
            [oracle_totals(a.instances, a.actions), oracle_totals(b.instances, b.actions)]
        ),
        rtol=1e-9,
    )


def write_labels(data: ExpertDataset, path, solved: int | None = None) -> None:
    """A shard of ``data`` whose first ``solved`` instances (default all) have their label."""
    num_depots = data.instances["depot_capacity"].shape[-1]
    rows = [
        CLRPSolution.from_actions(r, num_depots).to_actions(num_depots)
        for r in data.actions.tolist()
    ][: len(data) if solved is None else solved]
    zeros = [0.0] * len(rows)
    write_shard(Shard(data.instances, rows, zeros, zeros, zeros, {}), path)


def test_label_shards_feed_one_dataset_in_shard_order(tmp_path):
    first, second = expert_data("clrp10", 3, seed=1), expert_data("clrp10", 2, seed=2)
    write_labels(first, tmp_path / "shard_00000.npz")
    write_labels(second, tmp_path / "shard_00001.npz", solved=1)  # in progress
    write_labels(second, tmp_path / "shard_00002.npz", solved=0)  # nothing solved yet
    data = expert_dataset(tmp_path)
    assert len(data) == 4
    assert torch.equal(data.instances["demand"][3], second.instances["demand"][0])
    expected = np.concatenate(
        [
            oracle_totals(first.instances, first.actions),
            oracle_totals(second.instances[:1], second.actions[:1]),
        ]
    )
    np.testing.assert_allclose(env_totals(data.instances, data.actions), expected, rtol=1e-9)
    assert len(expert_dataset(tmp_path, limit=2)) == 2
    with pytest.raises(ValueError, match="limit"):
        expert_dataset(tmp_path, limit=0)
    with pytest.raises(ValueError, match="no labelled instances"):
        expert_dataset(tmp_path / "nothing")
    write_labels(expert_data("clrp20", 1, seed=3), tmp_path / "shard_00003.npz")
    with pytest.raises(
        ValueError, match=r"shards of \[\(10, 5\), \(20, 5\)\] \(customers, depots\)"
    ):
        expert_dataset(tmp_path)
    by_size = expert_datasets(tmp_path)  # a mixed preset's folder: one dataset per size
    assert {n: len(d) for n, d in by_size.items()} == {(10, 5): 4, (20, 5): 1}
    assert {n: len(d) for n, d in expert_datasets(tmp_path, limit=4).items()} == {(10, 5): 4}


# ---------------------------------------------------------------- the loss
def stock_policy() -> AttentionModelPolicy:
    """RL4CO's own attention model with the CLRP embeddings."""
    return AttentionModelPolicy(env_name="clrp", **TINY, **clrp_embeddings(TINY["embed_dim"]))


@pytest.mark.parametrize("model", ["drlhq", "drlhqcf", "pomo", "stock"])
def test_loss_is_minus_the_log_likelihood_the_policy_gives_its_own_rollout(model):
    """The policy samples sequences (its sampling decoder sums the log-probabilities of the
    actions it draws); teacher forcing those sequences must give the same numbers."""
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    torch.manual_seed(0)
    policy = stock_policy() if model == "stock" else build_policy(model, **TINY)
    instances = env.generator(5)
    with torch.no_grad():
        out = policy(env.reset(instances), env, decode_type="sampling")
        data = ExpertDataset(instances, out["actions"])
        lit = Imitation(env, policy, dataset=data, augment_routes=False, augment_dihedral=False)
        loss = lit.imitation_loss(data.data)
    torch.testing.assert_close(loss["log_likelihood"], out["log_likelihood"])
    torch.testing.assert_close(loss["loss"], -out["log_likelihood"].mean())


def test_log_likelihood_by_hand_on_one_instance():
    """Step the env by hand and score each expert action with the policy's softmax over the
    feasible actions at that state (its greedy decoding from the same prefix)."""
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    torch.manual_seed(2)
    policy = build_policy("drlhq", **TINY).eval()
    data = expert_data("clrp10", 1, seed=4)
    expected = 0.0
    with torch.no_grad():
        hidden, _ = policy.encoder(env.reset(data.instances))
        state = env.reset(data.instances)
        _, _, cache = policy.decoder.pre_decoder_hook(state, env, hidden, 0)
        for action in data.actions[0].tolist():
            if bool(state["done"].all()):
                break
            logits, mask = policy.decoder(state, cache, 0)
            logits = policy.tanh_clipping * torch.tanh(logits)
            logp = torch.log_softmax(logits.masked_fill(~mask, float("-inf")), -1)
            expected += float(logp[0, action])
            state.set("action", torch.tensor([action]))
            state = env.step(state)["next"]
        got = teacher_forced_log_likelihood(policy, env, data.instances, data.actions)
    assert float(got[0]) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("check_actions", [False, True])
def test_an_infeasible_or_unfinished_expert_sequence_is_named(check_actions):
    env = CLRPEnv(generator_params={"preset": "clrp10"}, check_actions=check_actions)
    policy = build_policy("drlhq", **TINY)
    data = expert_data("clrp10", 2, seed=6)
    bad = data.actions.clone()
    bad[1, 1] = bad[1, 0]  # the route's depot again right after opening it (rule 4)
    with pytest.raises(ValueError, match="infeasible for batch index 1"):
        teacher_forced_log_likelihood(policy, env, data.instances, bad)
    with pytest.raises(ValueError, match="actions end before the solution is finished"):
        teacher_forced_log_likelihood(policy, env, data.instances, data.actions[:, :5])


def test_a_few_steps_fit_a_fixed_batch():
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    torch.manual_seed(0)
    data = expert_data("clrp10", 4, seed=9)
    policy = build_policy("drlhq", **TINY)
    # the forms fixed: the same target sequences every step
    lit = Imitation(env, policy, dataset=data, augment_routes=False, augment_dihedral=False)
    optimizer = torch.optim.Adam(lit.policy.parameters(), lr=1e-2)
    losses = []
    for _ in range(25):
        loss = lit.imitation_loss(data.data)["loss"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    assert np.mean(losses[-5:]) < 0.8 * np.mean(losses[:5])


# ---------------------------------------------------------------- training and RL after it
def test_imitation_checkpoint_loads_into_the_policy_class_and_pomo_starts_from_it(tmp_path):

    env = CLRPEnv(generator_params={"preset": "clrp10"})
    torch.manual_seed(0)
    data = expert_data("clrp10", 6, seed=11)
    policy = build_policy("drlhqcf", **TINY)
    sizes = dict(batch_size=3, train_data_size=6, val_data_size=4, test_data_size=4)
    lit = build_model(env, policy, algorithm="imitation", dataset=data, **sizes)
    assert isinstance(lit, Imitation)
    trainer = RL4COTrainer(
        max_epochs=1,
        accelerator="cpu",
        devices=1,
        precision="32-true",
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[PolicyConfigCallback(), ModelCheckpoint(dirpath=tmp_path, save_last=True)],
        default_root_dir=str(tmp_path),
    )
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    trainer.fit(lit)
    assert trainer.global_step == 2  # 6 examples in batches of 3
    assert "val/max_reward" in trainer.callback_metrics
    loaded = load_policy(tmp_path / "last.ckpt")
    assert type(loaded) is DRLHQCostPolicy
    state = {k: v.clone() for k, v in loaded.state_dict().items()}
    assert all(torch.equal(state[k], policy.state_dict()[k]) for k in state)
    assert any(not torch.equal(before[k], state[k]) for k in state)  # it trained

    rl = build_model(env, loaded, algorithm="pomo", num_augment=1, **sizes)
    assert isinstance(rl, POMO)
    RL4COTrainer(
        max_steps=1,
        accelerator="cpu",
        devices=1,
        precision="32-true",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        default_root_dir=str(tmp_path),
    ).fit(rl)
    assert any(not torch.equal(state[k], loaded.state_dict()[k]) for k in state)


def test_run_py_trains_by_imitation_from_label_shards_then_pomo_from_its_weights(
    tmp_path, monkeypatch
):
    write_labels(expert_data("clrp10", 4, seed=13), tmp_path / "labels" / "shard_00000.npz")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PROJECT_ROOT", raising=False)
    monkeypatch.setenv("HYDRA_FULL_ERROR", "1")
    tail = ["experiment=tiny", f"model.dataset.folder={tmp_path / 'labels'}"]
    tail.append("model.likelihood=solution")  # the solution over its route orders
    monkeypatch.setattr(sys, "argv", ["run.py", "model=imitation", *tail])
    training.main()
    imitated = tmp_path / "runs" / "tiny_imitation" / "policy_best.pt"
    meta = json.loads(imitated.with_suffix(".json").read_text())
    assert meta["algorithm"] == "imitation"
    assert meta["expert_data"]["folder"] == str(tmp_path / "labels")
    monkeypatch.setattr(sys, "argv", ["run.py", "experiment=tiny", f"init={imitated}"])
    training.main()
    tuned = tmp_path / "runs" / "tiny_drlhq"
    assert json.loads((tuned / "policy_best.json").read_text())["expert_data"] is None
    assert OmegaConf.load(tuned / "config.yaml").init == str(imitated)
