"""One imitation pass over expert labels, as the imitation arms' recipes and the generalist's
``imitate`` run it.

A :class:`Recipe` reads ``solution,dihedral,1e-5``: the likelihood
(``clrp_rl4co.models.imitation.LIKELIHOODS``), ``dihedral`` (a random dihedral transform of each
instance) or ``identity``, and Adam's learning rate (0: no step). :func:`imitation_pass` runs one
on a policy in place; the caller gives its batch, weight decay and gradient clip.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.models.imitation import LIKELIHOODS, imitation_loss

AUGMENTS = ("dihedral", "identity")
#: Steps averaged for the loss at the pass's start and end.
LOSS_WINDOW = 5


@dataclass(frozen=True)
class Recipe:
    """One imitation pass's settings: likelihood, augmentation, Adam's learning rate."""

    likelihood: str
    augment: str
    lr: float

    @classmethod
    def parse(cls, text: str) -> Recipe:
        """``LIKELIHOOD,AUGMENT,LR``, e.g. ``solution,dihedral,1e-5``.

        Raises:
            ValueError: naming the recipe and the part that is wrong.
        """
        parts = text.split(",")
        if len(parts) != 3:
            raise ValueError(f"recipe {text!r}: need LIKELIHOOD,AUGMENT,LR")
        likelihood, augment, lr = parts
        if likelihood not in LIKELIHOODS:
            raise ValueError(f"recipe {text!r}: likelihood {likelihood!r} not in {LIKELIHOODS}")
        if augment not in AUGMENTS:
            raise ValueError(f"recipe {text!r}: augment {augment!r} not in {AUGMENTS}")
        try:
            rate = float(lr)
        except ValueError:
            raise ValueError(f"recipe {text!r}: learning rate {lr!r} is not a number") from None
        if not rate >= 0:
            raise ValueError(f"recipe {text!r}: learning rate {lr!r} must be >= 0")
        return cls(likelihood, augment, rate)


def imitation_pass(
    policy: torch.nn.Module,
    env: CLRPEnv,
    labels,
    recipe: Recipe,
    *,
    batch: int,
    weight_decay: float,
    grad_clip: float,
    seed: int = 0,
) -> dict[str, float]:
    """One pass of ``recipe`` over ``labels``, in place on ``policy``: Adam (``weight_decay``),
    the gradient's norm clipped at ``grad_clip``, ``batch`` labels per step.

    ``labels`` is an ``ExpertDataset`` (its instances in a seeded random order, ``batch`` at a
    time) or a list of them, one per instance size (each cut into batches that way, then the
    batches of all of them in a seeded random order).

    Returns ``steps``, ``train_cpu_hours`` (process time) and the mean loss of the first and of
    the last :data:`LOSS_WINDOW` steps."""
    policy.train()
    optimizer = torch.optim.Adam(policy.parameters(), lr=recipe.lr, weight_decay=weight_decay)
    generator = torch.Generator().manual_seed(seed)
    datasets = labels if isinstance(labels, list | tuple) else [labels]
    batches = []
    for dataset in datasets:
        order = torch.randperm(len(dataset), generator=generator).tolist()
        batches += [
            (dataset, order[first : first + batch]) for first in range(0, len(order), batch)
        ]
    if len(datasets) > 1:
        batches = [batches[k] for k in torch.randperm(len(batches), generator=generator).tolist()]
    began = time.process_time()
    losses = []
    for dataset, indices in batches:
        with torch.set_grad_enabled(recipe.lr > 0):
            loss = imitation_loss(
                policy,
                env,
                dataset.__getitems__(indices),
                augment_dihedral=recipe.augment == "dihedral",
                likelihood=recipe.likelihood,
            )["loss"]
        if recipe.lr > 0:
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), grad_clip)
            optimizer.step()
        losses.append(float(loss.detach()))
    window = min(LOSS_WINDOW, len(losses))
    return {
        "steps": len(losses),
        "train_cpu_hours": (time.process_time() - began) / 3600.0,
        "loss_first": sum(losses[:window]) / window,
        "loss_last": sum(losses[-window:]) / window,
    }
