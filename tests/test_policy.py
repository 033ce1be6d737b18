"""DRLHQ and its baselines: features, queries, streams, shipping."""

import dataclasses
import json
import math
from pathlib import Path

import pytest
import torch
from rl4co.utils.ops import batchify
from tensordict import TensorDict

import clrp_rl4co.pretrained
from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.policies import (
    POLICIES,
    CLRPInitEmbedding,
    DRLHQPolicy,
    HeterogeneousQueryContext,
    MTAPolicy,
    rotate45_augmentation,
)

TINY = dict(embed_dim=16, num_encoder_layers=1, num_heads=2, feedforward_hidden=32)


def hand_made_instance() -> TensorDict:
    """2 depots, 4 customers; vehicle capacity 10 forces two routes."""
    locs = torch.tensor([[[0.0, 0.0], [1.0, 1.0], [0.1, 0.2], [0.2, 0.1], [0.9, 0.8], [0.8, 0.9]]])
    return TensorDict(
        {
            "locs": locs,
            "cost_locs": locs.double(),
            "depot_capacity": torch.tensor([[20.0, 30.0]]),
            "opening_cost": torch.tensor([[2.0, 6.0]]),
            "demand": torch.tensor([[4.0, 5.0, 6.0, 3.0]]),
            "vehicle_capacity": torch.tensor([[10.0]]),
            "vehicle_fixed_cost": torch.tensor([[1.0]]),
            "rounded_costs": torch.zeros(1, dtype=torch.bool),
        },
        batch_size=[1],
    )


def test_depot_features_hand_made():
    td = CLRPEnv().reset(hand_made_instance())
    feats = CLRPInitEmbedding.depot_features(td)[0]
    # Q/O = [10, 5] -> min-max [1, 0]; Q / total demand (18) = [20/18, 30/18]
    torch.testing.assert_close(feats[:, 0], torch.tensor([1.0, 0.0]))
    torch.testing.assert_close(feats[:, 1], torch.tensor([20 / 18, 30 / 18]))
    td["opening_cost"] = torch.tensor([[2.0, 3.0]])  # equal ratios: guard max == min
    feats = CLRPInitEmbedding.depot_features(td)[0]
    assert torch.isfinite(feats).all() and torch.allclose(feats[:, 0], torch.tensor(0.5))


def test_init_embedding_invariant_to_translation_and_scale():
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    td = env.reset(env.generator(3))
    emb = CLRPInitEmbedding(8)
    moved = td.clone()
    moved["locs"] = td["locs"] * 37.0 + torch.tensor([5.0, -2.0])
    torch.testing.assert_close(emb(td), emb(moved), rtol=1e-5, atol=1e-5)
    norm = CLRPInitEmbedding.normalize_coordinates(moved["locs"])
    assert norm.min() >= 0 and norm.max() <= 1 + 1e-6


def test_rotate45_augmentation_keeps_distance_ratios():
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    xy = env.generator(2)["locs"]
    aug = rotate45_augmentation(xy.repeat(8, 1, 1), 8)
    for k in range(8):
        block = aug[2 * k : 2 * k + 2]
        d0, dk = torch.cdist(xy, xy), torch.cdist(block, block)
        ratio = dk[:, 0, 1:] / d0[:, 0, 1:]
        assert torch.allclose(ratio, ratio[:, :1].expand_as(ratio), atol=1e-4)
        assert block.min() >= -1e-6 and block.max() <= 1 + 1e-6
    assert not torch.allclose(aug[2:4], aug[0:2])


def _states_along_rollout(env, policy, td):
    """States visited by a greedy rollout (batch [1])."""
    out = policy(td.clone(), env, decode_type="greedy")
    states, state = [], td.clone()
    for action in out["actions"][0]:
        states.append(state)
        state = state.clone()
        state.set("action", action.reshape(1))
        state = env.step(state)["next"]
    return states


def test_location_query_at_location_steps_routing_query_at_routing_steps():
    torch.manual_seed(0)
    env = CLRPEnv()
    policy = DRLHQPolicy(**TINY)
    td = env.reset(hand_made_instance())
    states = _states_along_rollout(env, policy, td)
    stages = [bool(s["is_location_step"]) for s in states]
    assert stages[0] and any(stages[1:]) and not all(stages), "need both stages and 2+ routes"
    context: HeterogeneousQueryContext = policy.decoder.context_embedding
    emb, _ = policy.encoder(td)
    queries = torch.stack([context(emb, s)[0] for s in states]).detach()
    for which in ("project_location", "project_routing"):
        layer = getattr(context, which)
        saved = layer.weight.data.clone()
        layer.weight.data += 1.0
        changed = torch.stack([context(emb, s)[0] for s in states]).detach()
        layer.weight.data = saved
        moved = (changed - queries).abs().amax(-1) > 1e-6
        expected = torch.tensor(stages) if which == "project_location" else ~torch.tensor(stages)
        assert torch.equal(moved, expected), which
    # the fast path (projections precomputed per instance) equals W_L / W_R on the inputs
    for state, location in zip(states, stages):
        if location:
            explicit = context.project_location(context.location_inputs(emb, state))
        else:
            explicit = context.project_routing(context.routing_inputs(emb, state))
        torch.testing.assert_close(context(emb, state), explicit, rtol=1e-5, atol=1e-5)
    # h_sub at a later location step is the mean embedding of the last route's customers
    later = next(i for i, s in enumerate(states) if i > 0 and bool(s["is_location_step"]))
    s = states[later]
    inputs = context.location_inputs(emb, s)[0]
    route = s["last_route"][0].nonzero().squeeze(-1) + 2
    torch.testing.assert_close(inputs[16:], emb[0, route].mean(0))
    torch.testing.assert_close(inputs[:16], emb[0, int(s["current_node"])])
    first = context.location_inputs(emb, states[0])[0]
    torch.testing.assert_close(first[:16], context.placeholder_last.data)
    torch.testing.assert_close(first[16:], context.placeholder_sub.data)


def test_mta_zeroing_any_stream_changes_logits():
    torch.manual_seed(0)
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    policy = MTAPolicy(**TINY)
    td = env.reset(env.generator(2))
    td = env.step(td.set("action", torch.tensor([0, 1])))["next"]  # a routing step
    hidden, _ = policy.encoder(td)
    _, _, cache = policy.decoder.pre_decoder_hook(td, env, hidden)
    base, _ = policy.decoder(td, cache)
    for k in range(3):
        policy.decoder.stream_scale.fill_(1.0)
        policy.decoder.stream_scale[k] = 0.0
        logits, _ = policy.decoder(td, cache)
        assert (logits - base).abs().max() > 1e-5, f"stream {k} has no effect"
    policy.decoder.stream_scale.fill_(1.0)


@pytest.mark.parametrize("name", list(POLICIES))
def test_multistart_start_scheme(name):
    """DRLHQ's start scheme through RL4CO's stock multistart: start s serves customer s mod N
    first, from a depot the policy picked among those that can hold it."""
    torch.manual_seed(1)
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    policy = POLICIES[name](**TINY)
    td = env.generator(3)
    # depots 0-2 hold 12 units (below most demands, 10..19), depots 3-4 hold 400
    td["depot_capacity"] = torch.tensor([12.0, 12.0, 12.0, 400.0, 400.0]).expand(3, 5).clone()
    td = env.reset(td)
    out = policy(td.clone(), env, decode_type="multistart_sampling", return_actions=True)
    actions, batch, n = out["actions"], 3, 10
    assert actions.shape[0] == n * batch
    starts = torch.arange(n).repeat_interleave(batch) + 5  # start-major customer nodes
    assert torch.equal(actions[:, 0], starts)  # the start action
    assert (actions[:, 1] < 5).all()  # the policy's depot
    assert torch.equal(actions[:, 2], starts)  # the start customer, served first
    demand = td["demand"].repeat(n, 1).gather(1, (starts - 5)[:, None]).squeeze(1)
    big = demand > 12
    assert big.any() and (~big).any()
    assert (actions[big, 1] >= 3).all()  # only the large depots hold those customers
    assert (actions[~big, 1] < 3).any()  # elsewhere the policy may pick a small one
    env.check_solution_validity(td.repeat(n), actions)
    # RL4CO's select_start_nodes_fn is honoured: here every start serves the last customer
    last = policy(
        td.clone(),
        env,
        decode_type="multistart_greedy",
        num_starts=4,
        select_start_nodes_fn=lambda td, env, k: torch.full((k * td.shape[0],), 14),
    )["actions"]
    assert (last[:, 0] == 14).all() and (last[:, 2] == 14).all()


def test_pretrained_round_trip(tmp_path):
    torch.manual_seed(0)
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    policy = DRLHQPolicy(**TINY)
    weights, config = policy.save_pretrained(tmp_path / "tiny")
    torch.load(weights, weights_only=True)
    loaded = DRLHQPolicy.from_pretrained(tmp_path / "tiny")
    td = env.reset(env.generator(4))
    a = policy(td.clone(), env, decode_type="greedy")["actions"]
    b = loaded(td.clone(), env, decode_type="greedy")["actions"]
    assert torch.equal(a, b)
    with pytest.raises(FileNotFoundError):
        DRLHQPolicy.from_pretrained(tmp_path / "missing")


def test_paper_defaults():
    policy = DRLHQPolicy()
    assert policy.config["embed_dim"] == 256 and policy.config["num_heads"] == 16
    assert len(policy.encoder.net.layers) == 6
    assert policy.decoder.use_graph_context is False
    assert math.isclose(policy.tanh_clipping, 10.0)


def test_shipped_policies_load_and_decode():
    from clrp_rl4co.models import load_policy
    from clrp_rl4co.policies import shipped_models

    env = CLRPEnv(generator_params={"preset": "clrp10"})
    td = env.reset(env.generator(2))
    for name in shipped_models():
        policy = load_policy(Path(clrp_rl4co.pretrained.__file__).parent / f"{name}.pt").eval()
        with torch.no_grad():
            out = policy(td.clone(), env, decode_type="greedy")
        env.check_solution_validity(td, out["actions"])
        by_name = load_policy(name)  # a shipped name loads its own class (MTA*, POMO*, ...)
        assert type(by_name) is type(policy)
        folder = Path(clrp_rl4co.pretrained.__file__).parent
        meta = json.loads((folder / f"{name}.json").read_text())
        assert type(policy).__name__ == meta["class"]


def test_baselines_share_a_base_with_drlhq_instead_of_inheriting_from_it():
    from clrp_rl4co.policies import POMOStarPolicy
    from clrp_rl4co.policies.attention import CLRPAttentionPolicy
    from clrp_rl4co.policies.queries import LastNodeLoadContext

    assert not issubclass(POMOStarPolicy, DRLHQPolicy)
    assert issubclass(POMOStarPolicy, CLRPAttentionPolicy)
    assert issubclass(DRLHQPolicy, CLRPAttentionPolicy)
    assert type(DRLHQPolicy(**TINY).decoder.context_embedding) is HeterogeneousQueryContext
    assert type(POMOStarPolicy(**TINY).decoder.context_embedding) is LastNodeLoadContext
    with pytest.raises(TypeError, match="CLRPAttentionPolicy: set the class attribute context"):
        CLRPAttentionPolicy(**TINY)


def test_shipped_models_cover_each_preset_and_load_by_preset_name():
    from clrp_rl4co.policies import MTAPolicy, POMOStarPolicy, shipped_models

    for preset in ("clrp10", "clrp20", "clrp50", "clrp100"):
        assert f"drlhq_{preset}" in shipped_models("drlhq")
        meta = json.loads((Path(clrp_rl4co.pretrained.__file__).parent /
                           f"drlhq_{preset}.json").read_text())  # fmt: skip
        assert meta["preset"] == preset and meta["training_instances"] > 0
    by_preset = DRLHQPolicy.from_pretrained("clrp20")
    by_name = DRLHQPolicy.from_pretrained("drlhq_clrp20")
    assert all(torch.equal(a, b) for a, b in zip(by_preset.state_dict().values(),
                                                 by_name.state_dict().values()))  # fmt: skip
    assert type(POMOStarPolicy.from_pretrained("clrp20")) is POMOStarPolicy
    assert type(MTAPolicy.from_pretrained("clrp20")) is MTAPolicy
    with pytest.raises(FileNotFoundError, match="clrp30"):
        DRLHQPolicy.from_pretrained("clrp30")


def test_registry_maps_names_classes_and_shipped_models():
    from clrp_rl4co.policies import (
        TITLES,
        build_policy,
        policy_class,
        policy_name,
        shipped_models,
    )

    assert set(TITLES) == set(POLICIES)
    for name, cls in POLICIES.items():
        assert policy_class(name) is cls and policy_class(cls.__name__) is cls
        assert policy_name(cls) == name and policy_name(build_policy(name, **TINY)) == name
        assert all(m.startswith((f"{name}_clrp", f"{name}_mixed")) for m in shipped_models(name))
    assert sorted(sum((shipped_models(n) for n in POLICIES), [])) == shipped_models()
    assert policy_name(type("MyPolicy", (DRLHQPolicy,), {})) is None  # subclasses: not by name
    with pytest.raises(ValueError, match="policy: unknown 'gpt'; choose one of"):
        build_policy("gpt")


def test_clrp_context_is_w_of_current_node_load_and_stage():
    """RL4CO's default-policy context: W [h_current, load / q, is_location_step], for
    states of batch shape [B] and [B, S]."""
    from clrp_rl4co.policies import CLRPContext

    torch.manual_seed(0)
    context = CLRPContext(4)
    embeddings = torch.randn(2, 5, 4)
    td = TensorDict(
        {
            "current_node": torch.tensor([[3], [1]]),
            "vehicle_load": torch.tensor([[35.0], [70.0]]),
            "vehicle_capacity": torch.tensor([[70.0], [70.0]]),
            "is_location_step": torch.tensor([[False], [True]]),
        },
        batch_size=[2],
    )
    inputs = torch.stack(
        [
            torch.cat([embeddings[0, 3], torch.tensor([0.5, 0.0])]),
            torch.cat([embeddings[1, 1], torch.tensor([1.0, 1.0])]),
        ]
    )
    expected = inputs @ context.project_context.weight.T
    torch.testing.assert_close(context(embeddings, td), expected)
    # multistart states [B, S] against embeddings [B, M, E]
    starts = td.unsqueeze(1).expand(2, 3).clone()
    torch.testing.assert_close(context(embeddings, starts), expected[:, None].expand(2, 3, 4))


def _instance_rows(cache, instance: int):
    """The decoder cache of one instance: per-instance tensors (2+ dims, batch first) sliced to
    ``[instance]``; shared parameters (1 dim) and scalars kept."""
    if isinstance(cache, torch.Tensor):
        return cache[instance : instance + 1] if cache.dim() >= 2 else cache
    if isinstance(cache, dict):
        return {key: _instance_rows(value, instance) for key, value in cache.items()}
    if isinstance(cache, tuple):
        return tuple(_instance_rows(value, instance) for value in cache)
    if dataclasses.is_dataclass(cache):
        return dataclasses.replace(
            cache,
            **{
                f.name: _instance_rows(getattr(cache, f.name), instance)
                for f in dataclasses.fields(cache)
            },
        )
    return cache


@pytest.mark.parametrize("policy_class", [DRLHQPolicy, MTAPolicy])
def test_multistart_logits_equal_each_row_decoded_alone(policy_class):
    """Multistart decoding is a batching device: row ``s * B + b`` of a [S * B] state must get
    the logits that decoding that row alone, with instance ``b``'s embeddings, gives."""
    torch.manual_seed(0)
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    policy = policy_class(**TINY)
    td = env.reset(env.generator(2))
    hidden, _ = policy.encoder(td)
    num_starts = env.get_num_starts(td)
    state = batchify(td, num_starts)
    state.set("action", env.select_start_nodes(td, num_starts))
    state = env.step(state)["next"]
    generator = torch.Generator().manual_seed(1)
    for _ in range(6):  # random feasible steps: the rows reach different stages and loads
        action = torch.multinomial(state["action_mask"].float(), 1, generator=generator)
        state.set("action", action.squeeze(-1))
        state = env.step(state)["next"]
    stages = state["is_location_step"].reshape(-1)
    assert stages.any() and not stages.all()
    _, _, cache = policy.decoder.pre_decoder_hook(td, env, hidden, num_starts)
    with torch.no_grad():
        logits, mask = policy.decoder(state, cache, num_starts)
        assert torch.equal(mask, state["action_mask"])
        for row in range(state.batch_size[0]):
            alone, _ = policy.decoder(state[row : row + 1], _instance_rows(cache, row % 2), 0)
            torch.testing.assert_close(logits[row], alone[0], rtol=1e-5, atol=1e-5)
