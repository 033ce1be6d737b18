"""Imitation of expert solutions in RL4CO's idiom: :class:`Imitation`, an ``RL4COLitModule``
that trains any RL4CO autoregressive policy here (``DRLHQPolicy``, ``DRLHQCostPolicy``,
``AttentionModelPolicy`` with ``clrp_embeddings``, ...) by the negative log-likelihood of expert
action sequences.

The loss is computed by the policy itself: ``policy(td, env, actions=expert)`` runs RL4CO's
``evaluate`` decoding, one teacher-forced rollout per sequence in which every decoder step scores
the given action under the env's mask, location steps (which depot opens the next route)
included. The loss is ``-log p(sequence)`` (the sum over the steps of the log-probabilities;
padding after the end is a one-hot no-op and adds 0), averaged over the batch.

**Equivalent sequences.** One CLRP solution has many action sequences of equal cost: any order
of its routes, either direction of each route, and (to the policy, which reads ``locs``) any of
the 8 dihedral transforms of the coordinates. Training on one stored order would teach the
solver's arbitrary order as if it were the target, and spend capacity on it. Each training batch
is therefore drawn as a *random equivalent form*: a uniformly random route order, a fair coin per
route direction and a uniformly random dihedral member per instance
(:func:`.equivalence.augment_expert_batch`). In expectation the loss is the cross-entropy to the
uniform mixture over these forms, which ranks the solution, not an order; it costs one rollout
per sequence (canonicalising would teach one fixed order; a loss over the whole set would cost
``R! 2^R x 8`` rollouts). The dihedral members are RL4CO's ``dihedral8``, the ones the x8
decoding applies at test time. ``likelihood="solution"`` scores the solution over all its route
orders and directions instead, at the cost of one rollout too: a one-sample lower bound of its
log-likelihood along a rollout that follows the policy's own choice among the routes
(:mod:`.solution_likelihood`).

**Multistart.** Expert sequences are taught in the plain form ``d, c, ..., d, ...`` that the env
accepts at its reset state, not in the multistart form ``s, d, s, ...``: the start action is
RL4CO's forcing device (no log-probability, and it changes no state the policies' queries read,
only ``start_customer`` and the mask), and the forced customer after it has a one-hot mask. So a
multistart rollout from start ``s`` scores the same decoder steps, with the same queries, as the
plain sequence whose first route begins with ``s``; the plain form adds the first customer's
choice (which plain greedy decoding uses), and its first depot step is normalised over the
depots that hold the smallest demand rather than those that hold ``s``. With random route order
and direction, each route end is the first customer equally often: no start is singled out.

Validation and test decode as RL4CO's POMO does (multistart greedy over all starts, x
``num_augment`` augmentation), logging ``reward``, ``max_reward`` and ``max_aug_reward``, so
imitation runs select checkpoints on the metric POMO runs use (``val/max_reward``) and the
curves compare. The training data is fixed: an epoch draws ``train_data_size`` examples
(reshuffled permutations of the dataset), and nothing is regenerated between epochs.
"""

from __future__ import annotations

from typing import Any

import torch
from rl4co.data.transforms import StateAugmentation
from rl4co.envs.common.base import RL4COEnvBase
from rl4co.models import POMO
from rl4co.models.rl.common.base import RL4COLitModule
from tensordict import TensorDict
from torch.utils.data import DataLoader, RandomSampler

from .equivalence import augment_expert_batch
from .expert_data import EXPERT_ACTIONS, ExpertDataset
from .solution_likelihood import solution_log_likelihood


def teacher_forced_log_likelihood(
    policy: torch.nn.Module, env: RL4COEnvBase, instances: TensorDict, actions: torch.Tensor
) -> torch.Tensor:
    """``log p(actions)`` [B] under ``policy``: the env reset on ``instances`` (batch [B]) and
    RL4CO's ``evaluate`` decoding of ``actions`` [B, T] (padded with the env's no-op), the sum
    of each step's log-probability.

    Raises:
        ValueError: a sequence holds an action the env masks, or ends before its solution is
            finished (with the env's ``rollout_actions``: naming the batch index and action).
    """
    td = env.reset(instances)
    try:
        out = policy(
            td, env, phase="train", actions=actions, calc_reward=False, return_actions=False
        )
    except (AssertionError, IndexError, RuntimeError):
        # RL4CO asserts on a -inf log-probability and indexes past the end of a short sequence;
        # the env's replay names the row (other errors are raised as they are)
        if hasattr(env, "rollout_actions"):
            env.rollout_actions(instances, actions)
        raise
    return out["log_likelihood"]


#: What the loss scores: one action sequence, or the solution (:mod:`.solution_likelihood`).
LIKELIHOODS = ("sequence", "solution")


def imitation_loss(
    policy: torch.nn.Module,
    env: RL4COEnvBase,
    batch: TensorDict,
    augment_routes: bool = True,
    augment_dihedral: bool = True,
    likelihood: str = "sequence",
) -> dict[str, torch.Tensor]:
    """The imitation loss of a batch of :class:`ExpertDataset` (batch [B]).

    Returns ``loss`` (the mean over the batch of ``-log p``) and ``log_likelihood`` [B], where
    ``log p`` is, with ``likelihood="sequence"``, that of a random equivalent form of each expert
    sequence (:func:`.equivalence.augment_expert_batch`), and with ``"solution"`` the one-sample
    bound of the solution's log-likelihood over its route orders and directions
    (:func:`.solution_likelihood.solution_log_likelihood`; ``augment_routes`` changes nothing
    there, the dihedral transform still applies). Any training loop can call it
    (``loss.backward()``); :class:`Imitation` is RL4CO's."""
    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood: {likelihood!r} is not one of {LIKELIHOODS}")
    instances, actions = augment_expert_batch(
        batch.exclude(EXPERT_ACTIONS),
        batch[EXPERT_ACTIONS],
        routes=augment_routes and likelihood == "sequence",
        dihedral=augment_dihedral,
    )
    if likelihood == "solution":
        log_likelihood, _ = solution_log_likelihood(policy, env, instances, actions)
    else:
        log_likelihood = teacher_forced_log_likelihood(policy, env, instances, actions)
    return {"loss": -log_likelihood.mean(), "log_likelihood": log_likelihood}


class Imitation(RL4COLitModule):
    """Trains ``policy`` by the negative log-likelihood of the expert sequences of ``dataset``
    (module docstring: the loss, the equivalent forms, the multistart form).

    Args:
        env: the CLRP env (its validation / test sets and generator are the model's).
        policy: any RL4CO constructive policy.
        dataset: the expert data (:class:`ExpertDataset`).
        augment_routes: draw a random route order and directions per sequence and batch.
        augment_dihedral: draw a random dihedral transform of ``locs`` per instance and batch.
        likelihood: ``"sequence"`` or ``"solution"`` (:func:`imitation_loss`).
        num_augment: validation / test augmentation (1: none), as in POMO.
        augment_fn: ``"dihedral8"`` or a callable (e.g. ``rotate45_augmentation``), as in POMO.
        num_starts: validation / test starts (None: one per customer), as in POMO.
        shuffle_train_dataloader: draw each epoch's examples in a fresh random order.
        kwargs: ``RL4COLitModule``'s (batch sizes, ``train_data_size`` = examples per epoch,
            ``val_data_size``, optimizer, scheduler, metrics, ...).
    """

    def __init__(
        self,
        env: RL4COEnvBase,
        policy: torch.nn.Module,
        dataset: ExpertDataset,
        augment_routes: bool = True,
        augment_dihedral: bool = True,
        likelihood: str = "sequence",
        num_augment: int = 8,
        augment_fn: str | Any = "dihedral8",
        num_starts: int | None = None,
        shuffle_train_dataloader: bool = True,
        **kwargs: Any,
    ):
        if not isinstance(dataset, ExpertDataset):
            raise ValueError(f"dataset: need an ExpertDataset, got {type(dataset).__name__}")
        if len(dataset) == 0:
            raise ValueError("dataset: holds no expert sequences")
        if likelihood not in LIKELIHOODS:
            raise ValueError(f"likelihood: {likelihood!r} is not one of {LIKELIHOODS}")
        if int(num_augment) < 1:
            raise ValueError(f"num_augment: must be >= 1, got {num_augment!r}")
        kwargs.setdefault(
            "metrics",
            {
                "train": ["loss"],
                "val": ["reward", "max_reward"] + (["max_aug_reward"] if num_augment > 1 else []),
                "test": ["reward", "max_reward"] + (["max_aug_reward"] if num_augment > 1 else []),
            },
        )
        super().__init__(env, policy, shuffle_train_dataloader=shuffle_train_dataloader, **kwargs)
        self.dataset = dataset
        self.augment_routes = bool(augment_routes)
        self.augment_dihedral = bool(augment_dihedral)
        self.likelihood = likelihood
        # the attributes POMO's validation step reads (shared_step below)
        self.num_starts = num_starts
        self.num_augment = int(num_augment)
        self.augment = (
            StateAugmentation(num_augment=self.num_augment, augment_fn=augment_fn)
            if self.num_augment > 1
            else None
        )
        for phase in ("val", "test"):
            decode_type = getattr(self.policy, f"{phase}_decode_type")
            if not decode_type.startswith("multistart"):
                setattr(self.policy, f"{phase}_decode_type", f"multistart_{decode_type}")

    # ------------------------------------------------------------------ data
    def setup(self, stage: str = "fit") -> None:
        """Batch sizes, the expert data as training set and the env's validation / test sets
        (RL4CO's ``setup`` without generating a training set)."""
        cfg = self.data_cfg
        self.train_batch_size = cfg["batch_size"]
        self.val_batch_size = cfg["val_batch_size"] or self.train_batch_size
        self.test_batch_size = cfg["test_batch_size"] or self.val_batch_size
        self.train_dataset = self.dataset
        self.val_dataset = self.env.dataset(cfg["val_data_size"], phase="val")
        self.test_dataset = self.env.dataset(cfg["test_data_size"], phase="test")
        self.dataloader_names = None
        self.setup_loggers()
        self.post_setup_hook()

    def train_dataloader(self) -> DataLoader:
        """``train_data_size`` examples per epoch, in shuffled passes over the dataset (in order
        when ``shuffle_train_dataloader`` is off)."""
        size = int(self.data_cfg["train_data_size"])
        if size < 1:
            raise ValueError(f"train_data_size: must be >= 1, got {size}")
        if self.shuffle_train_dataloader:
            sampler = RandomSampler(self.train_dataset, num_samples=size)
        else:
            sampler = [i % len(self.train_dataset) for i in range(size)]
        return DataLoader(
            self.train_dataset,
            batch_size=self.train_batch_size,
            sampler=sampler,
            num_workers=self.dataloader_num_workers,
            collate_fn=self.train_dataset.collate_fn,
        )

    def on_train_epoch_end(self) -> None:
        """Nothing to regenerate: the expert data is fixed."""

    # ------------------------------------------------------------------ steps
    def imitation_loss(self, batch: TensorDict) -> dict[str, torch.Tensor]:
        """:func:`imitation_loss` of a batch with this module's policy, env and forms."""
        return imitation_loss(
            self.policy,
            self.env,
            batch,
            augment_routes=self.augment_routes,
            augment_dihedral=self.augment_dihedral,
            likelihood=self.likelihood,
        )

    def shared_step(
        self, batch: TensorDict, batch_idx: int, phase: str, dataloader_idx: int | None = None
    ) -> dict:
        if phase != "train":
            # decoded exactly as POMO decodes (same metrics, same checkpoint selection)
            return POMO.shared_step(self, batch, batch_idx, phase, dataloader_idx=dataloader_idx)
        out = self.imitation_loss(batch)
        metrics = self.log_metrics(out, phase, dataloader_idx=dataloader_idx)
        return {"loss": out["loss"], **metrics}
