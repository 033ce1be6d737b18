"""Growing a trained policy's encoder deeper without changing what it computes.

:func:`deeper` appends encoder layers to a trained DRLHQ-style policy (RL4CO's
``GraphAttentionNetwork`` of post-norm ``MultiHeadAttentionLayer`` blocks with instance
normalisation) so that the grown policy decodes as the trained one did, and training can then
use the new layers' capacity:

- each new layer's attention output projection and its feed-forward output layer start at zero,
  so both skip connections pass their input through unchanged;
- each new layer's two instance norms start with the affine of the norm before them, made
  positive: ``weight = |gamma|``, ``bias = beta``. Their input ``h = gamma x + beta`` (``x``
  normalised per feature over the nodes) normalises to ``sign(gamma) x``, and the affine maps
  that back to ``h`` (up to the norm's ``eps``);
- the attention's query / key / value projection and the feed-forward hidden layer keep their
  fresh random initialisation (seeded): they receive gradients once the output layers move.

:func:`grown_parameters` names the new layers' parameters (for their own learning rate).
"""

from __future__ import annotations

import torch

#: Where the encoder's layers sit in a DRLHQ policy's parameter names.
LAYER_PREFIX = "encoder.net.layers."


def encoder_layers(policy: torch.nn.Module) -> torch.nn.Sequential:
    """The encoder's stack of attention layers (``policy.encoder.net.layers``)."""
    return policy.encoder.net.layers


def deeper(policy: torch.nn.Module, num_encoder_layers: int, seed: int = 0) -> torch.nn.Module:
    """A copy of ``policy`` with ``num_encoder_layers`` encoder layers: its own layers, then new
    ones that start as the identity (the module docstring).

    Args:
        policy: a trained policy with ``config`` (its constructor arguments) and
            ``registry_name`` (``clrp_rl4co.policies.build_policy``).
        num_encoder_layers: the grown policy's encoder layers (more than ``policy``'s).
        seed: seed of the new layers' random projections.

    Raises:
        ValueError: ``num_encoder_layers`` is not more than ``policy``'s, or ``policy`` does not
            use instance normalisation (the identity start needs it).
    """
    from clrp_rl4co.policies import build_policy

    config = dict(policy.config)
    old = len(encoder_layers(policy))
    if num_encoder_layers <= old:
        raise ValueError(
            f"num_encoder_layers: {num_encoder_layers} must be more than the policy's {old}"
        )
    if config.get("normalization", "instance") != "instance":
        raise ValueError(
            f"normalization: {config.get('normalization')!r}; growing needs 'instance'"
        )
    with torch.random.fork_rng():  # the caller's random stream stays as it was
        torch.manual_seed(seed)
        grown = build_policy(
            policy.registry_name, **{**config, "num_encoder_layers": num_encoder_layers}
        )
    missing, unexpected = grown.load_state_dict(policy.state_dict(), strict=False)
    if unexpected or any(not name.startswith(LAYER_PREFIX) for name in missing):
        raise ValueError(f"growing changed more than the encoder's layers: {missing, unexpected}")
    layers = encoder_layers(grown)
    with torch.no_grad():
        for index in range(old, num_encoder_layers):
            previous_norm = layers[index - 1][3].normalizer
            attention, first_norm, feed_forward, second_norm = layers[index]
            attention.module.out_proj.weight.zero_()
            attention.module.out_proj.bias.zero_()
            feed_forward.module.lins[-1].weight.zero_()
            feed_forward.module.lins[-1].bias.zero_()
            for norm in (first_norm.normalizer, second_norm.normalizer):
                norm.weight.copy_(previous_norm.weight.abs())
                norm.bias.copy_(previous_norm.bias)
    return grown


def grown_parameters(policy: torch.nn.Module, first_new_layer: int) -> set[str]:
    """Names of ``policy``'s parameters in encoder layers ``first_new_layer`` and after."""
    names = set()
    for name, _ in policy.named_parameters():
        if name.startswith(LAYER_PREFIX):
            index = int(name[len(LAYER_PREFIX) :].split(".", 1)[0])
            if index >= first_new_layer:
                names.add(name)
    return names
