"""Growing a trained policy's encoder (experiments/imitation/growth.py): the grown policy
computes what the trained one computed, keeps its weights, and its new layers can learn."""

from __future__ import annotations

import pytest
import torch
from test_imitation import TINY

from clrp_rl4co.envs import CLRPEnv, CLRPGenerator
from clrp_rl4co.envs.clrp import generate_dataset
from clrp_rl4co.models import build_policy
from experiments.imitation.growth import deeper, encoder_layers, grown_parameters


@pytest.fixture
def trained():
    """A tiny policy whose weights are not the initial ones: every parameter moved at random,
    so the norms' affines are no longer 1 and 0 (some scales negative)."""
    torch.manual_seed(3)
    policy = build_policy("drlhq", **{**TINY, "num_encoder_layers": 2})
    with torch.no_grad():
        for parameter in policy.parameters():
            parameter.add_(0.5 * torch.randn_like(parameter))
    assert any((layer[3].normalizer.weight < 0).any() for layer in encoder_layers(policy))
    return policy.eval()


@pytest.fixture
def batch():
    env = CLRPEnv(check_actions=False)
    return env, env.reset(generate_dataset(CLRPGenerator(preset="clrp10"), 4, seed=7))


def test_the_grown_encoder_embeds_every_node_as_before(trained, batch):
    env, td = batch
    grown = deeper(trained, 5).eval()
    assert len(encoder_layers(grown)) == 5 and grown.config["num_encoder_layers"] == 5
    with torch.no_grad():
        before, _ = trained.encoder(td)
        after, _ = grown.encoder(td)
    assert before.shape == after.shape
    torch.testing.assert_close(after, before, rtol=1e-3, atol=1e-3)


def test_the_grown_policy_decodes_the_same_routes(trained, batch):
    env, td = batch
    grown = deeper(trained, 3).eval()
    with torch.no_grad():
        out_before = trained(td.clone(), env, decode_type="greedy", return_actions=True)
        out_after = grown(td.clone(), env, decode_type="greedy", return_actions=True)
    assert torch.equal(out_before["actions"], out_after["actions"])
    torch.testing.assert_close(out_after["reward"], out_before["reward"])


def test_the_trained_weights_are_kept_bit_for_bit_and_the_trained_policy_is_untouched(trained):
    weights = {k: v.clone() for k, v in trained.state_dict().items()}
    grown = deeper(trained, 4).state_dict()
    assert all(torch.equal(grown[name], value) for name, value in weights.items())
    assert all(torch.equal(trained.state_dict()[k], v) for k, v in weights.items())
    new = set(grown) - set(weights)
    assert new and all(name.startswith("encoder.net.layers.") for name in new)
    assert {int(name.split(".")[3]) for name in new} == {2, 3}


def test_a_new_layer_starts_with_zero_output_layers_and_the_norms_of_the_layer_before(trained):
    grown = deeper(trained, 3)
    last_norm = encoder_layers(trained)[1][3].normalizer
    attention, first_norm, feed_forward, second_norm = encoder_layers(grown)[2]
    assert not attention.module.out_proj.weight.any() and not attention.module.out_proj.bias.any()
    assert not feed_forward.module.lins[-1].weight.any()
    for norm in (first_norm.normalizer, second_norm.normalizer):
        assert torch.equal(norm.weight, last_norm.weight.abs())
        assert torch.equal(norm.bias, last_norm.bias)
    # the projections that feed the output layers are random, not zero
    assert attention.module.Wqkv.weight.any() and feed_forward.module.lins[0].weight.any()


def test_the_new_layers_receive_gradients(trained, batch):
    env, td = batch
    grown = deeper(trained, 3).train()
    out = grown(td.clone(), env, decode_type="sampling")
    (-out["reward"] * out["log_likelihood"]).mean().backward()
    attention = encoder_layers(grown)[2][0].module
    assert attention.out_proj.weight.grad is not None and attention.out_proj.weight.grad.any()


def test_growing_is_seeded_and_leaves_the_callers_random_stream(trained):
    torch.manual_seed(11)
    expected = torch.rand(3)
    torch.manual_seed(11)
    first = deeper(trained, 3, seed=1).state_dict()
    assert torch.equal(torch.rand(3), expected)
    second = deeper(trained, 3, seed=1).state_dict()
    third = deeper(trained, 3, seed=2).state_dict()
    name = "encoder.net.layers.2.0.module.Wqkv.weight"
    assert torch.equal(first[name], second[name]) and not torch.equal(first[name], third[name])


def test_growing_refuses_no_new_layers_and_another_normalisation(trained):
    with pytest.raises(ValueError, match="num_encoder_layers: 2 must be more than the policy's 2"):
        deeper(trained, 2)
    batch_norm = build_policy("drlhq", **{**TINY, "normalization": "batch"})
    with pytest.raises(ValueError, match="normalization: 'batch'; growing needs 'instance'"):
        deeper(batch_norm, 3)


def test_the_grown_parameters_are_those_of_the_new_layers(trained):
    grown = deeper(trained, 4)
    names = grown_parameters(grown, 2)
    every = dict(grown.named_parameters())
    assert names == {
        n for n in every if n.startswith(("encoder.net.layers.2.", "encoder.net.layers.3."))
    }
    assert sum(every[n].numel() for n in names) == 2 * sum(
        p.numel() for p in encoder_layers(trained)[0].parameters()
    )
    assert grown_parameters(grown, 4) == set()
