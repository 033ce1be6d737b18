"""RL4CO's stock paths on the released rl4co (0.7.0, unpatched): policies, decoding, models.

The CLRP start scheme lives in the env, so RL4CO's own multistart / beam search decoding and
its POMO, PolyNet and EAS loops run the CLRP without anything from this package's policies.
"""

import pytest
import torch
from rl4co.data.transforms import StateAugmentation
from rl4co.models import POMO, AttentionModelPolicy, PolyNet
from rl4co.models.zoo import EASLay
from rl4co.utils.ops import batchify
from rl4co.utils.trainer import RL4COTrainer

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.policies import DRLHQPolicy, clrp_embeddings

TINY = dict(embed_dim=16, num_encoder_layers=1, num_heads=2)
NUM_DEPOTS, NUM_CUSTOMERS = 5, 10


def stock_policy() -> AttentionModelPolicy:
    """RL4CO's default attention model with the CLRP embeddings passed in (the one line the
    README shows for rl4co versions without CLRP in their registries)."""
    return AttentionModelPolicy(env_name="clrp", **TINY, **clrp_embeddings(16))


def check_starts(td, actions, num_starts):
    """Start s: start action customer s mod N, a depot that holds it, then that customer."""
    batch = td.batch_size[0] // num_starts
    starts = torch.arange(num_starts).repeat_interleave(batch) % NUM_CUSTOMERS + NUM_DEPOTS
    assert torch.equal(actions[:, 0], starts)
    assert torch.equal(actions[:, 2], starts)
    depot = actions[:, 1]
    assert (depot < NUM_DEPOTS).all()
    demand = td["demand"].gather(1, (starts - NUM_DEPOTS)[:, None]).squeeze(1)
    assert (td["depot_capacity"].gather(1, depot[:, None]).squeeze(1) >= demand).all()


@pytest.fixture
def env_td():
    torch.manual_seed(0)
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    td = env.generator(2)
    td["depot_capacity"][:, :3] = 12.0  # most customers fit only depots 3 and 4
    return env, env.reset(td)


@pytest.mark.parametrize("decode_type", ["greedy", "sampling"])
def test_stock_policy_single_start(env_td, decode_type):
    env, td = env_td
    out = stock_policy()(td.clone(), env, decode_type=decode_type, return_actions=True)
    env.check_solution_validity(td, out["actions"])
    assert (out["actions"][:, 0] < NUM_DEPOTS).all()  # no start action without multistart


@pytest.mark.parametrize("policy_factory", [stock_policy, lambda: DRLHQPolicy(**TINY)])
@pytest.mark.parametrize("augment", [1, 8])
@pytest.mark.parametrize("decode_type", ["multistart_greedy", "multistart_sampling"])
def test_stock_multistart(env_td, policy_factory, augment, decode_type):
    env, td = env_td
    if augment > 1:
        td = StateAugmentation(num_augment=augment)(td)
    out = policy_factory()(td.clone(), env, decode_type=decode_type, return_actions=True)
    actions = out["actions"]
    assert actions.shape[0] == NUM_CUSTOMERS * td.batch_size[0]
    check_starts(batchify(td, NUM_CUSTOMERS), actions, NUM_CUSTOMERS)
    env.check_solution_validity(batchify(td, NUM_CUSTOMERS), actions)
    assert torch.isfinite(out["log_likelihood"]).all()


@pytest.mark.parametrize("policy_factory", [stock_policy, lambda: DRLHQPolicy(**TINY)])
def test_stock_beam_search(env_td, policy_factory):
    env, td = env_td
    out = policy_factory()(
        td.clone(), env, decode_type="beam_search", beam_width=4, select_best=False
    )
    actions = out["actions"]
    assert actions.shape[0] == 4 * td.batch_size[0]
    env.check_solution_validity(batchify(td, 4), actions)
    # beams are reordered by log-probability, each keeps its own start customer
    assert torch.equal(actions[:, 0], actions[:, 2]) and (actions[:, 0] >= NUM_DEPOTS).all()


def _trainer() -> RL4COTrainer:
    return RL4COTrainer(
        max_epochs=1,
        accelerator="cpu",
        precision="32-true",
        limit_train_batches=1,
        limit_val_batches=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )


SIZES = dict(batch_size=2, val_batch_size=2, train_data_size=2, val_data_size=2)


@pytest.mark.parametrize(
    "make",
    [
        lambda env: POMO(env, policy=stock_policy(), **SIZES),
        lambda env: POMO(env, policy=DRLHQPolicy(**TINY), **SIZES),
        lambda env: PolyNet(env, policy=DRLHQPolicy(**TINY), k=4, **SIZES),
    ],
    ids=["POMO-AM", "POMO-DRLHQ", "PolyNet-DRLHQ"],
)
def test_stock_models_train_a_step(make):
    torch.manual_seed(0)
    env = CLRPEnv(generator_params={"preset": "clrp10"}, check_actions=True)
    model = make(env)
    before = [p.detach().clone() for p in model.policy.parameters()]
    _trainer().fit(model)
    after = list(model.policy.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(after, before))


def test_eas_search_keeps_valid_solutions():
    """EAS runs its own start selection and replays its incumbent (zero-padded, RL4CO's
    convention, which is the CLRP's padding too) for several iterations; the best solutions it
    stores must be valid and match the rewards it reports."""
    torch.manual_seed(0)
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    dataset = env.dataset(2)
    model = EASLay(env, DRLHQPolicy(**TINY), dataset, max_iters=3, batch_size=2)
    _trainer().fit(model)
    td = env.reset(dataset.collate_fn([dataset[i] for i in range(2)]))
    solutions = model.instance_solutions
    env.check_solution_validity(td, solutions)
    torch.testing.assert_close(env.get_reward(td, solutions), model.instance_rewards)
