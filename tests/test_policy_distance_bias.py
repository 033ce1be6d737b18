"""DRLHQ-CF's size-aware distance bias (clrp_rl4co/policies/distance_attention.py): attention
logits get ``- alpha log2(N) d(i, j)``; alpha 0 is the unbiased policy, the bias follows its
definition on a hand-built instance, gradients reach alpha, saving and converting."""

import dataclasses
import json
import math

import pytest
import torch
from rl4co.models.nn.graph.attnnet import GraphAttentionNetwork
from rl4co.utils.ops import batchify

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset, instance_tensordict
from clrp_rl4co.models import decode_batch
from clrp_rl4co.policies import DRLHQCostPolicy, DRLHQPolicy, load_policy
from clrp_rl4co.policies.distance_attention import (
    DistanceAttentionNetwork,
    DistanceBiasDecoder,
    scaled_distances,
)
from clrp_rl4co.policies.queries import PrecomputedQueryDecoder
from clrp_rl4co.search.sgbs import sgbs

TINY = dict(embed_dim=16, num_encoder_layers=2, num_heads=2, feedforward_hidden=32)


def _pair(seed: int = 0):
    """An unbiased tiny DRLHQ-CF policy and its distance-biased copy (alphas 0), eval mode."""
    torch.manual_seed(seed)
    plain = DRLHQCostPolicy(**TINY).eval()
    return plain, DRLHQCostPolicy.with_distance_bias(plain).eval()


def _set_alphas(policy, encoder=0.0, glimpse=0.0, logit=0.0):
    with torch.no_grad():
        for name, alpha in policy.distance_alphas().items():
            value = glimpse if "glimpse" in name else logit if "logit" in name else encoder
            alpha.fill_(value)


@pytest.fixture(scope="module")
def batch():
    return generate_dataset(CLRPGenerator(preset="mixed", num_loc=15), 4, seed=5)


def _hand_instance():
    """2 depots, 3 customers on a 4 x 4 box (normalised by 4): node 0 (0, 0), 1 (4, 0),
    2 (1, 0), 3 (4, 4), 4 (2, 2); N = 3, so the scale is log2(3)."""
    locs = torch.tensor([[0.0, 0.0], [4.0, 0.0], [1.0, 0.0], [4.0, 4.0], [2.0, 2.0]])[None]
    return instance_tensordict(
        locs,
        depot_capacity=torch.tensor([[50.0, 50.0]]),
        opening_cost=torch.tensor([[3.0, 4.0]]),
        demand=torch.tensor([[5.0, 6.0, 7.0]]),
        vehicle_capacity=20.0,
        vehicle_fixed_cost=1.0,
    )


# ---------------------------------------------------------------- alpha 0 = no bias
def test_alpha_zero_encoder_equals_rl4cos(batch):
    plain, biased = _pair()
    assert type(plain.encoder.net) is GraphAttentionNetwork
    assert type(biased.encoder.net) is DistanceAttentionNetwork
    # same parameter names and shapes, plus the alphas (zero)
    old, new = plain.state_dict(), biased.state_dict()
    assert set(new) - set(old) == set(biased.distance_alphas())
    assert all(torch.equal(old[k], new[k]) for k in old)
    assert not any(a.any() for a in biased.distance_alphas().values())
    td = CLRPEnv().reset(batch.clone())
    with torch.no_grad():
        h_plain, init_plain = plain.encoder(td)
        h_biased, init_biased = biased.encoder(td)
    assert torch.equal(init_plain, init_biased)
    torch.testing.assert_close(h_biased, h_plain, atol=1e-6, rtol=0)


def _rollout_states(env, policy, td, decode_type):
    """States [S * B] visited by a rollout of ``policy`` (the decoding's own states)."""
    out = policy(env.reset(td.clone()), env, decode_type=decode_type, return_actions=True)
    num_starts = out["actions"].shape[0] // td.batch_size[0]
    state = env.reset(td.clone())
    if num_starts > 1:
        state = batchify(state, num_starts)
    states = []
    for t in range(out["actions"].shape[-1]):
        states.append(state)
        state = state.clone()
        state.set("action", out["actions"][:, t])
        state = env.step(state)["next"]
    return states, num_starts


@pytest.mark.parametrize("decode_type", ["greedy", "multistart_greedy"])
def test_alpha_zero_logits_and_actions_equal_the_unbiased_policy(batch, decode_type):
    plain, biased = _pair()
    env = CLRPEnv(check_actions=False)
    td = env.reset(batch.clone())
    states, num_starts = _rollout_states(env, plain, batch, decode_type)
    assert any(bool(s["num_routes"].gt(0).any()) for s in states)  # anchored steps are checked
    with torch.no_grad():
        caches = []
        for policy in (plain, biased):
            hidden, _ = policy.encoder(td)
            caches.append(policy.decoder.pre_decoder_hook(td, env, hidden, num_starts)[2])
        for state in states[1:] if num_starts > 1 else states:  # multistart: after the start
            a, mask_a = plain.decoder(state, caches[0], num_starts)
            b, mask_b = biased.decoder(state, caches[1], num_starts)
            assert torch.equal(mask_a, mask_b)
            torch.testing.assert_close(b, a, atol=1e-6, rtol=0)
    for spec in ("greedy", "multistart_greedy", "multistart_greedy+aug8", "beam_search:4"):
        a, parts_a, _ = decode_batch(plain, env, batch, spec)
        b, parts_b, _ = decode_batch(biased, env, batch, spec)
        assert torch.equal(a, b), spec
        assert torch.equal(parts_a["total"], parts_b["total"]), spec


def test_alpha_zero_sampling_and_sgbs_equal_the_unbiased_policy(batch):
    plain, biased = _pair()
    env = CLRPEnv(check_actions=False)
    outs = []
    for policy in (plain, biased):
        torch.manual_seed(7)
        with torch.no_grad():
            outs.append(policy(env.reset(batch.clone()), env, decode_type="sampling"))
    assert torch.equal(outs[0]["actions"], outs[1]["actions"])
    a = sgbs(env, plain, batch, beta=2, gamma=2, augment=1)
    b = sgbs(env, biased, batch, beta=2, gamma=2, augment=1)
    assert torch.equal(a.actions, b.actions) and torch.equal(a.reward, b.reward)


# ---------------------------------------------------------------- the bias by hand
def test_scaled_distances_by_hand():
    td = _hand_instance()
    dist = scaled_distances(td)[0]
    scale = math.log2(3)  # N = 3 customers
    assert dist.shape == (5, 5)
    expected_row0 = torch.tensor([0.0, 1.0, 0.25, math.sqrt(2), math.sqrt(0.5)]) * scale
    torch.testing.assert_close(dist[0], expected_row0)
    torch.testing.assert_close(dist, dist.T)
    assert torch.equal(dist.diagonal(), torch.zeros(5))
    # the coordinates are the init embedding's: invariant to the unit and to translations
    moved = td.clone()
    moved["locs"] = td["locs"] * 7.0 + 3.0
    torch.testing.assert_close(scaled_distances(moved), scaled_distances(td))


def test_encoder_bias_shifts_far_against_near_by_the_formula():
    """Head 0 of layer 0, query node 0: with alpha_0 = 0.5 the log-ratio of the attention on
    the far node 3 (d = sqrt 2) to the near node 2 (d = 1/4) drops by
    0.5 log2(3) (sqrt 2 - 1/4); head 1 (alpha 0) is unchanged."""
    _, biased = _pair()
    td = CLRPEnv().reset(_hand_instance())
    attention = biased.encoder.net.layers[0][0].module
    dist = scaled_distances(td)
    with torch.no_grad():
        x = biased.encoder.init_embedding(td)
        before = attention.attention_logits(x, dist)
        attention.distance_alpha[0] = 0.5
        after = attention.attention_logits(x, dist)
        weights_before, weights_after = before.softmax(-1), after.softmax(-1)
        near, far = 2, 3
        log_ratio = lambda w, h: math.log(w[0, h, 0, far] / w[0, h, 0, near])  # noqa: E731
        expected = -0.5 * math.log2(3) * (math.sqrt(2) - 0.25)
        assert log_ratio(weights_after, 0) - log_ratio(weights_before, 0) == pytest.approx(
            expected, abs=1e-5
        )
        assert expected < 0  # the far node loses weight against the near one
        assert log_ratio(weights_after, 1) == pytest.approx(log_ratio(weights_before, 1))
        # the layer's forward uses exactly these weights
        _, _, v = attention._heads(x)
        manual = attention.out_proj((weights_after @ v).transpose(1, 2).reshape(1, 5, -1))
        torch.testing.assert_close(attention(x, dist), manual, atol=1e-6, rtol=0)


def test_pointer_bias_from_the_current_node_by_the_formula():
    """Routing step at customer node 2 (depot 0 opened, node 2 served): logit_alpha = 0.7
    moves each logit by -0.7 log2(3) d(node 2, j). Before the first route starts (no
    anchor) the decoder's alphas change nothing."""
    _, biased = _pair()
    env = CLRPEnv()
    first = env.reset(_hand_instance())
    state = first
    for action in (0, 2):  # location step: depot 0; routing step: customer node 2
        state = state.clone()
        state.set("action", torch.tensor([action]))
        state = env.step(state)["next"]
    assert not bool(state["is_location_step"]) and int(state["current_node"]) == 2
    decoder = biased.decoder
    assert isinstance(decoder, DistanceBiasDecoder)
    with torch.no_grad():
        hidden, _ = biased.encoder(first)
        _, _, cache = decoder.pre_decoder_hook(first, env, hidden, 0)
        base, _ = decoder(state, cache, 0)
        base_first, _ = decoder(first, cache, 0)
        _set_alphas(biased, logit=0.7)
        moved, _ = decoder(state, cache, 0)
        # node 2 at (1/4, 0): distances to nodes 0..4
        d = torch.tensor([0.25, 0.75, 0.0, 1.25, math.sqrt(0.3125)])
        torch.testing.assert_close(moved - base, -0.7 * math.log2(3) * d[None], atol=1e-5, rtol=0)
        near, far = 4, 3  # customers still to serve
        shift = (moved - base)[0, far] - (moved - base)[0, near]
        assert float(shift) == pytest.approx(-0.7 * math.log2(3) * (1.25 - math.sqrt(0.3125)))
        # the glimpse's alphas change the logits at an anchored step only
        _set_alphas(biased, glimpse=3.0, logit=0.7)
        glimpsed, _ = decoder(state, cache, 0)
        assert not torch.allclose(glimpsed, moved, atol=1e-4)
        assert torch.equal(decoder(first, cache, 0)[0], base_first)


def test_location_step_is_anchored_to_the_depot_the_route_returned_to():
    _, biased = _pair()
    env = CLRPEnv()
    first = env.reset(_hand_instance())
    state = first
    for action in (1, 3, 1):  # depot 1, customer node 3, back to depot 1: a location step
        state = state.clone()
        state.set("action", torch.tensor([action]))
        state = env.step(state)["next"]
    assert bool(state["is_location_step"]) and int(state["current_node"]) == 1
    anchor = DistanceBiasDecoder.anchor_distance(scaled_distances(first), state)
    torch.testing.assert_close(anchor, scaled_distances(first)[:, 1])
    none = DistanceBiasDecoder.anchor_distance(scaled_distances(first), first)
    assert torch.equal(none, torch.zeros_like(none))


def test_multistart_logits_equal_each_row_decoded_alone(batch):
    """With nonzero alphas, row ``s * B + b`` of a multistart state gets the logits of that
    row decoded alone against instance ``b``'s cache (anchors gathered per row)."""
    _, biased = _pair()
    _set_alphas(biased, encoder=0.3, glimpse=1.0, logit=2.0)
    env = CLRPEnv()
    td = env.reset(batch[:2].clone())
    num_starts = env.get_num_starts(td)
    state = batchify(td, num_starts)
    state.set("action", env.select_start_nodes(td, num_starts))
    state = env.step(state)["next"]
    generator = torch.Generator().manual_seed(1)
    for _ in range(6):
        action = torch.multinomial(state["action_mask"].float(), 1, generator=generator)
        state.set("action", action.squeeze(-1))
        state = env.step(state)["next"]
    with torch.no_grad():
        hidden, _ = biased.encoder(td)
        _, _, cache = biased.decoder.pre_decoder_hook(state, env, hidden, num_starts)
        logits, mask = biased.decoder(state, cache, num_starts)
        assert torch.equal(mask, state["action_mask"])
        for row in range(state.batch_size[0]):
            b = row % 2
            alone = dataclasses.replace(
                cache,
                **{
                    f.name: getattr(cache, f.name)[b : b + 1]
                    for f in dataclasses.fields(cache)
                    if isinstance(getattr(cache, f.name), torch.Tensor)
                },
                query_parts={
                    k: v[b : b + 1] if v.dim() >= 2 else v for k, v in cache.query_parts.items()
                },
            )
            single, _ = biased.decoder(state[row : row + 1], alone, 0)
            torch.testing.assert_close(logits[row], single[0], rtol=1e-5, atol=1e-5)


def test_biased_policy_decodes_validly(batch):
    _, biased = _pair()
    _set_alphas(biased, encoder=0.5, glimpse=1.0, logit=2.0)
    env = CLRPEnv(check_actions=True)
    for spec in ("greedy", "multistart_greedy", "sgbs:2x2"):
        actions, parts, _ = decode_batch(biased, env, batch, spec)
        env.check_solution_validity(env.reset(batch.clone()), actions)
        assert torch.isfinite(parts["total"]).all()


# ---------------------------------------------------------------- training and shipping
def test_gradients_reach_every_alpha(batch):
    _, biased = _pair()
    biased.train()
    env = CLRPEnv(check_actions=False)
    torch.manual_seed(0)
    out = biased(env.reset(batch.clone()), env, phase="train", decode_type="sampling")
    (-(out["reward"] * out["log_likelihood"]).mean()).backward()
    alphas = biased.distance_alphas()
    assert len(alphas) == TINY["num_encoder_layers"] + 2
    for name, alpha in alphas.items():
        assert alpha.grad is not None and torch.isfinite(alpha.grad).all(), name
        assert alpha.grad.abs().sum() > 0, name


def test_save_and_load_round_trip(tmp_path, batch):
    _, biased = _pair()
    _set_alphas(biased, encoder=0.2, glimpse=0.4, logit=0.6)
    biased.save_pretrained(tmp_path / "biased")
    meta = json.loads((tmp_path / "biased.json").read_text())
    assert meta["class"] == "DRLHQCostPolicy" and meta["config"]["distance_bias"] is True
    loaded = load_policy(tmp_path / "biased").eval()
    assert type(loaded) is DRLHQCostPolicy and loaded.distance_bias
    assert loaded.config == biased.config
    for name, alpha in biased.distance_alphas().items():
        assert torch.equal(loaded.distance_alphas()[name], alpha)
    env = CLRPEnv(check_actions=False)
    a, _, _ = decode_batch(biased, env, batch, "multistart_greedy")
    b, _, _ = decode_batch(loaded, env, batch, "multistart_greedy")
    assert torch.equal(a, b)


def test_old_configs_load_without_the_bias(tmp_path):
    shipped = load_policy("drlhqcf_mixed50_cpu")
    assert type(shipped) is DRLHQCostPolicy and not shipped.distance_bias
    assert "distance_bias" not in shipped.config and not shipped.distance_alphas()
    assert type(shipped.encoder.net) is GraphAttentionNetwork
    assert type(shipped.decoder) is PrecomputedQueryDecoder
    # a policy saved without the bias writes the config it wrote before
    plain, _ = _pair()
    plain.save_pretrained(tmp_path / "plain")
    assert "distance_bias" not in json.loads((tmp_path / "plain.json").read_text())["config"]
    # old weights do not fit a biased policy as they are: with_distance_bias is the path
    with pytest.raises(ValueError, match="do not fit"):
        DRLHQCostPolicy.from_pretrained("drlhqcf_mixed50_cpu", distance_bias=True)
    with pytest.raises(ValueError, match="already has the distance bias"):
        DRLHQCostPolicy.with_distance_bias(DRLHQCostPolicy.with_distance_bias(plain))
    with pytest.raises(ValueError, match="need a DRLHQCostPolicy, got DRLHQPolicy"):
        DRLHQCostPolicy.with_distance_bias(DRLHQPolicy(**TINY))


def test_converting_the_shipped_generalist_keeps_its_greedy_actions():
    shipped = load_policy("drlhqcf_mixed50_cpu").eval()
    converted = DRLHQCostPolicy.with_distance_bias("drlhqcf_mixed50_cpu").eval()
    assert converted.distance_bias and converted.config == {**shipped.config, "distance_bias": True}
    env = CLRPEnv(check_actions=False)
    td = generate_dataset(CLRPGenerator(preset="mixed", num_loc=50), 4, seed=21)
    for spec in ("greedy", "multistart_greedy"):
        a, parts_a, _ = decode_batch(shipped, env, td, spec)
        b, parts_b, _ = decode_batch(converted, env, td, spec)
        assert torch.equal(a, b), spec
        assert torch.equal(parts_a["total"], parts_b["total"]), spec
