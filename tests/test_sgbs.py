"""SGBS on CLRP (DRLHQ) and on RL4CO's CVRP (stock AttentionModelPolicy)."""

import pytest
import torch
from rl4co.data.transforms import StateAugmentation
from rl4co.envs import CVRPEnv
from rl4co.models.zoo.am.policy import AttentionModelPolicy

from clrp_rl4co import CLRPEnv
from clrp_rl4co.envs.clrp import generate_dataset
from clrp_rl4co.policies import DRLHQPolicy
from clrp_rl4co.search.sgbs import sgbs


def _clrp(batch, seed=0):
    torch.manual_seed(seed)
    env = CLRPEnv(generator_params={"preset": "clrp20"})
    policy = DRLHQPolicy(embed_dim=32, num_encoder_layers=1, num_heads=4, feedforward_hidden=64)
    return env, policy, generate_dataset(env.generator, batch, seed=seed)


def _cvrp(batch, seed=0):
    torch.manual_seed(seed)
    env = CVRPEnv(generator_params={"num_loc": 20})
    policy = AttentionModelPolicy(
        env_name="cvrp", embed_dim=32, num_encoder_layers=1, num_heads=4, feedforward_hidden=64
    )
    return env, policy, env.generator(batch)


def _multistart_greedy(env, policy, td):
    out = policy(env.reset(td.clone()), env, decode_type="multistart_greedy", return_actions=True)
    num_starts = out["reward"].shape[0] // td.batch_size[0]
    reward = out["reward"].reshape(num_starts, -1)
    best = reward.argmax(0)
    rows = best * td.batch_size[0] + torch.arange(td.batch_size[0])
    return reward.amax(0), out["actions"][rows]


@pytest.mark.parametrize("make", [_clrp, _cvrp])
def test_beta_gamma_one_reproduces_greedy_multistart(make):
    env, policy, td = make(6)
    policy.eval()
    with torch.no_grad():
        reward, actions = _multistart_greedy(env, policy, td)
    result = sgbs(env, policy, td, beta=1, gamma=1, augment=1)
    assert torch.equal(result.reward, reward)
    length = actions.shape[-1]
    assert torch.equal(result.actions[:, :length], actions)
    assert result.stats["simulation_steps"] == 0


@pytest.mark.parametrize("make", [_clrp, _cvrp])
def test_sgbs_beats_greedy_multistart_and_is_valid(make):
    env, policy, td = make(32)
    result = sgbs(env, policy, td, beta=4, gamma=4, augment=1)
    assert (result.reward >= result.greedy_reward).all()
    assert result.reward.mean() > result.greedy_reward.mean()
    state = env.reset(td.clone())
    env.check_solution_validity(state, result.actions)
    replay = (
        env.get_reward(env.reset(td.clone()), result.actions)
        if env.name == "clrp"
        else (env.get_reward(state, result.actions))
    )
    assert torch.allclose(replay, result.reward)


def test_sgbs_with_augmentation_and_variant_three_children():
    # the baseline is greedy multistart over the same 8 augmented copies (rows a * B + b, as
    # RL4CO's StateAugmentation lays them out), not over the instances alone
    env, policy, td = _clrp(4)
    batch = td.batch_size[0]
    copies = StateAugmentation(num_augment=8, augment_fn="dihedral8")(env.reset(td.clone()))
    with torch.no_grad():
        greedy, _ = _multistart_greedy(env, policy, td)
        per_copy, _ = _multistart_greedy(env, policy, copies)
    per_copy = per_copy.reshape(8, batch)  # [copy, instance]
    over_copies = per_copy.amax(0)
    # guards: the copies disagree, and the best one is not always copy 0, so reading the
    # wrong row of the copy layout changes the result
    assert (per_copy.amax(0) > per_copy.amin(0)).all()
    assert (per_copy.argmax(0) != 0).any()
    for gamma in (3, 4):
        result = sgbs(env, policy, td, beta=4, gamma=gamma, augment=8, max_batch=256)
        assert torch.allclose(result.greedy_reward, over_copies, atol=1e-4)
        assert (result.greedy_reward >= greedy - 1e-5).all()
        assert (result.reward >= over_copies - 1e-4).all()
        # the actions are a solution of each row's own instance, worth the reported reward
        env.check_solution_validity(env.reset(td.clone()), result.actions)
        replay = env.get_reward(env.reset(td.clone()), result.actions)
        assert torch.allclose(replay, result.reward, atol=1e-4)


def test_one_batched_decoder_call_per_simulation_step():
    env, policy, td = _clrp(8)
    calls = []
    handle = policy.decoder.register_forward_hook(lambda *a: calls.append(1))
    try:
        result = sgbs(env, policy, td, beta=4, gamma=4, augment=1)
    finally:
        handle.remove()
    stats = result.stats
    assert len(calls) == stats["expansions"] + stats["simulation_steps"] + stats["multistart_steps"]
    assert stats["decoder_calls"] == stats["expansions"] + stats["simulation_steps"]
    # many children are simulated per step: not one call per beam node
    assert stats["simulated_children"] >= 8 * 4 * 3
    assert stats["simulation_steps"] < stats["simulated_children"]
    # in chunks of instances (here 3, 3 and 2) the counters add up over the chunks
    calls.clear()
    handle = policy.decoder.register_forward_hook(lambda *a: calls.append(1))
    try:
        chunked = sgbs(env, policy, td, beta=4, gamma=4, augment=1, max_batch=3 * 16)
    finally:
        handle.remove()
    stats = chunked.stats
    assert len(calls) == stats["expansions"] + stats["simulation_steps"] + stats["multistart_steps"]
    assert stats["multistart_steps"] > result.stats["multistart_steps"]


def test_each_instance_is_searched_as_if_alone():
    # an instance's result does not depend on the others in its batch (one instance with
    # beta = 1 included: its beam has a single row, fewer than gamma)
    env, policy, td = _clrp(3)
    together = sgbs(env, policy, td, beta=1, gamma=3, augment=1)
    for b in range(3):
        alone = sgbs(env, policy, td[b : b + 1], beta=1, gamma=3, augment=1)
        assert torch.allclose(alone.reward, together.reward[b : b + 1])
        assert torch.allclose(alone.greedy_reward, together.greedy_reward[b : b + 1])
    assert (together.reward > together.greedy_reward).any()  # guard: the search did something


def test_the_given_env_decides_the_starts():
    # an env with three starts per instance (customers 0, 1, 2 only): beta = gamma = 1 is
    # greedy multistart over those three, not over the default one-per-customer starts
    class ThreeStarts(CLRPEnv):
        def get_num_starts(self, td):
            return 3

    env, policy, td = _clrp(6)
    three = ThreeStarts(generator_params={"preset": "clrp20"})
    with torch.no_grad():
        policy.eval()
        reward, _ = _multistart_greedy(three, policy, td)
        everywhere, _ = _multistart_greedy(env, policy, td)
    assert not torch.allclose(reward, everywhere)  # guard: the starts matter here
    result = sgbs(three, policy, td, beta=1, gamma=1, augment=1)
    assert torch.allclose(result.reward, reward)


def test_bad_parameters():
    env, policy, td = _clrp(2)
    for beta, gamma in ((0, 4), (4, 0)):
        message = f"^beta and gamma must be >= 1, got beta={beta}, gamma={gamma}$"
        with pytest.raises(ValueError, match=message):
            sgbs(env, policy, td, beta=beta, gamma=gamma)


def test_chunks_reuse_and_training_mode_leave_the_result_alone():
    env, policy, td = _clrp(3)
    batch, beta, gamma = td.batch_size[0], 2, 3
    policy.train()
    full = sgbs(env, policy, td, beta=beta, gamma=gamma, augment=1)
    assert policy.training  # restored after the search (which runs in eval mode)
    assert set(full.stats) == {
        "decoder_calls",
        "simulation_steps",
        "expansions",
        "multistart_steps",
        "simulated_children",
        "seconds",
        "stopped",
    }
    assert full.stats["seconds"] > 0 and full.stats["expansions"] > 0
    # instances in chunks of two and one (max_batch = 2 x beta x gamma): the same greedy start,
    # a valid search result worth its reward. Not compared with the unchunked search: batched
    # matmuls of other sizes can break near-ties of an untrained policy differently (seen
    # when other tests ran first in the same process)
    chunked = sgbs(env, policy, td, beta=beta, gamma=gamma, augment=1, max_batch=2 * beta * gamma)
    assert torch.allclose(chunked.greedy_reward, full.greedy_reward, atol=1e-4)
    assert (chunked.reward >= chunked.greedy_reward - 1e-5).all()
    replay = env.get_reward(env.reset(td.clone()), chunked.actions)
    assert torch.allclose(replay, chunked.reward, atol=1e-4)
    # simulating the greedy child instead of reusing its parent's score: the same scores,
    # beta x B more simulated children per expansion
    policy.eval()
    again = sgbs(env, policy, td, beta=beta, gamma=gamma, augment=1, reuse_greedy=False)
    assert not policy.training
    assert torch.allclose(again.reward, full.reward)
    assert again.stats["expansions"] == full.stats["expansions"]
    extra = again.stats["simulated_children"] - full.stats["simulated_children"]
    assert extra == full.stats["expansions"] * beta * batch


def test_sgbs_decode_spec_in_evaluation():
    from clrp_rl4co.models import DecodeSpec, decode_batch

    spec = DecodeSpec.parse("sgbs:4x3+aug8")
    assert spec.sgbs == (4, 3) and spec.augment == "aug8"
    assert DecodeSpec.parse("sgbs").sgbs == (4, 4)
    with pytest.raises(ValueError, match="<beta>x<gamma>"):
        DecodeSpec.parse("sgbs:4")
    env, policy, td = _clrp(3)
    actions, parts, _ = decode_batch(policy, env, td, "sgbs:2x2")
    env.check_solution_validity(env.reset(td.clone()), actions)
    greedy_actions, greedy_parts, _ = decode_batch(policy, env, td, "multistart_greedy")
    assert (parts["total"] <= greedy_parts["total"] + 1e-9).all()


def test_a_stop_ends_the_search_with_its_best_so_far():
    """Stopped before the first expansion, SGBS is the greedy multistart result (its first
    step); stopped after a few expansions it is between that and the full search, and every
    returned solution replays to its reward."""
    env, policy, td = _clrp(16)
    policy.eval()
    with torch.no_grad():
        greedy, _ = _multistart_greedy(env, policy, td)
    at_once = sgbs(env, policy, td, beta=4, gamma=4, augment=1, stop=lambda: True)
    assert torch.equal(at_once.reward, greedy)
    assert at_once.stats["expansions"] == 0 and at_once.stats["stopped"]
    asked = []

    def after_three() -> bool:
        asked.append(None)
        return len(asked) > 3

    partial = sgbs(env, policy, td, beta=4, gamma=4, augment=1, stop=after_three)
    full = sgbs(env, policy, td, beta=4, gamma=4, augment=1)
    assert partial.stats["expansions"] == 3 and partial.stats["stopped"]
    assert not full.stats["stopped"] and full.stats["expansions"] > 3
    assert (partial.reward >= greedy).all() and (full.reward >= partial.reward).all()
    replay = env.get_reward(env.reset(td.clone()), partial.actions)
    assert torch.allclose(replay, partial.reward)
