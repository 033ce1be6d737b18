"""Decode a batch with a policy under a decode spec: best-of-starts / beams / augmentations per
instance (:func:`decode_batch`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from rl4co.data.transforms import StateAugmentation
from tensordict import TensorDict

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.policies import rotate45_augmentation
from clrp_rl4co.search.sgbs import sgbs

#: Augmentation suffixes of a decode spec.
AUGMENTATIONS = {"aug8": "dihedral8", "rot8": rotate45_augmentation}


@dataclass
class DecodeSpec:
    """A decode spec string ``<decode_type>[:<width>][+aug8|+rot8]``.

    ``decode_type`` is an RL4CO decode type (``greedy``, ``sampling``, ``multistart_greedy``,
    ``multistart_sampling``, ``beam_search``) or ``sgbs``; ``width`` is the beam width, the
    number of starts (``multistart_*``; start ``s`` serves customer ``s mod N`` first),
    the number of samples (``sampling``) or ``<beta>x<gamma>`` for SGBS (default ``4x4``);
    ``+aug8`` adds RL4CO's dihedral x8 augmentation, ``+rot8`` the paper's 45-degree rotations.
    Examples: ``greedy``, ``multistart_greedy+aug8``, ``beam_search:16``, ``sgbs:4x3+aug8``.
    """

    text: str
    decode_type: str
    width: int | None = None
    augment: str | None = None
    sgbs: tuple[int, int] | None = None  # (beta, gamma) for decode type "sgbs"

    @classmethod
    def parse(cls, text: str) -> DecodeSpec:
        base, _, augment = text.partition("+")
        decode_type, _, width = base.partition(":")
        if augment and augment not in AUGMENTATIONS:
            raise ValueError(f"{text}: unknown augmentation {augment!r} ({list(AUGMENTATIONS)})")
        if decode_type == "sgbs":
            beta, _, gamma = (width or "4x4").partition("x")
            if not (beta.isdigit() and gamma.isdigit()):
                raise ValueError(f"{text}: SGBS width must read <beta>x<gamma>, e.g. sgbs:4x4")
            return cls(text, decode_type, None, augment or None, (int(beta), int(gamma)))
        return cls(text, decode_type, int(width) if width else None, augment or None)

    def kwargs(self) -> dict:
        if self.width is None:
            return {}
        if self.decode_type == "beam_search":
            return {"beam_width": self.width}
        if self.decode_type.startswith("multistart"):
            return {"num_starts": self.width}
        if self.decode_type == "sampling":
            return {"num_samples": self.width}
        return {}


@torch.no_grad()
def decode_batch(
    policy: torch.nn.Module,
    env: CLRPEnv,
    instances: TensorDict,
    spec: DecodeSpec | str,
    stop: Callable[[], bool] | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor], float]:
    """Decode a batch of instances with ``policy`` under the decode ``spec``.

    Returns ``(actions [B, T], cost parts (float64 [B] each, see :meth:`CLRPEnv.cost_parts`),
    seconds)``. The best of the starts / beams / samples / augmentations is kept per instance,
    then replayed on the untouched instances. ``stop`` makes SGBS anytime
    (:func:`clrp_rl4co.search.sgbs`); the other decodings run to the end."""
    spec = DecodeSpec.parse(spec) if isinstance(spec, str) else spec
    batch = instances.batch_size[0]
    start = time.perf_counter()
    if spec.decode_type == "sgbs":
        beta, gamma = spec.sgbs
        copies = 8 if spec.augment else 1
        augment_fn = AUGMENTATIONS[spec.augment] if spec.augment else "dihedral8"
        result = sgbs(
            env,
            policy,
            instances,
            beta=beta,
            gamma=gamma,
            augment=copies,
            augment_fn=augment_fn,
            stop=stop,
        )
        seconds = time.perf_counter() - start
        final = env.rollout_actions(instances, result.actions)
        return result.actions, env.cost_parts(final), seconds
    td = env.reset(instances.clone())
    if spec.augment:
        td = StateAugmentation(num_augment=8, augment_fn=AUGMENTATIONS[spec.augment])(td)
    out = policy(td, env, decode_type=spec.decode_type, calc_reward=True, **spec.kwargs())
    reward, actions = out["reward"], out["actions"]
    repeats = reward.shape[0] // batch  # rows r * B + b (starts outside, augmentations inside)
    best = reward.view(repeats, batch).argmax(0)
    rows = best * batch + torch.arange(batch, device=best.device)
    actions = actions[rows]
    seconds = time.perf_counter() - start
    final = env.rollout_actions(instances, actions)
    return actions, env.cost_parts(final), seconds
