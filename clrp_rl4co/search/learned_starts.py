"""Learned starts: a policy decoded on one instance within a time budget, a few good and diverse
solutions kept.

:func:`learned_starts` runs the units of :func:`.decode_plan.plan_units` while each is predicted
to fit in what is left of its budget (the prior of :func:`.decode_plan.predict_decode_seconds`,
rescaled by the measured/predicted ratio of the last unit run), keeps the best distinct
rollouts (:class:`.rollout_pool.RolloutPool`) and chooses the starts among them
(:func:`.rollout_pool.diverse_starts`). SGBS (``sgbs:4x4+aug8``) adds one more rollout after an
x8 decode when its predicted time (a multiple of the measured x8 time) fits; asked for by name
it runs as long as the budget allows and returns its best so far at the deadline.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from tensordict import TensorDict

from ..data import CLRPInstance, CLRPSolution, instances_to_tensordict
from . import decode_plan
from .decode_plan import Unit, plan_units, predict_decode_seconds
from .rollout_pool import RolloutPool, diverse_starts, valid_solutions

logger = logging.getLogger(__name__)


@dataclass
class LearnedStarts:
    """The solutions kept from decoding a policy on one instance.

    Attributes:
        solutions: valid solutions, best first (the first is the best decoded).
        objectives: their costs in the instance's units.
        decode: what was decoded, e.g. ``x8``, ``greedy+ms64``, ``x8+sgbs``, or ``none``.
        trajectories: the number of rollouts decoded.
        seconds: wall time spent.
        rollouts: the best distinct valid rollouts (at most
            :attr:`.decode_plan.DecodeParams.pool_size`), best first: the route pool of
            :func:`clrp_rl4co.solvers.recombine.recombine`.
    """

    solutions: list[CLRPSolution] = field(default_factory=list)
    objectives: list[float] = field(default_factory=list)
    decode: str = "none"
    trajectories: int = 0
    seconds: float = 0.0
    rollouts: list[CLRPSolution] = field(default_factory=list)


def customers_in_order(td: TensorDict, order: np.ndarray) -> TensorDict:
    """The env input ``td`` [B] with its customers listed in ``order`` (customer ``k`` is
    ``order[k]``, [N] indices): the customer rows of ``locs`` and ``cost_locs`` and the
    entries of ``demand`` permuted; the depots and the rest as they are (shared, not copied)."""
    num_depots = td["depot_capacity"].shape[-1]
    order = torch.as_tensor(order, dtype=torch.long, device=td.device)
    nodes = torch.cat([torch.arange(num_depots, device=td.device), num_depots + order])
    permuted = td.clone(recurse=False)
    permuted["locs"] = td["locs"][..., nodes, :]
    permuted["cost_locs"] = td["cost_locs"][..., nodes, :]
    permuted["demand"] = td["demand"][..., order]
    return permuted


@torch.no_grad()
def _rollouts(policy, env, td: TensorDict, augment: list[int] | None, starts: int):
    """Decode the instance of ``td`` (an env input of one instance; greedy when ``starts ==
    0``, else multistart greedy from its first ``starts`` customers) on the dihedral transforms
    ``augment`` (None: the identity only). Returns ``(actions [R, T] numpy, costs [R]
    numpy)``, costs in the instance's units."""
    from rl4co.data.transforms import StateAugmentation

    td = env.reset(td)
    if augment is not None:
        td = StateAugmentation(num_augment=8, augment_fn="dihedral8")(td)[torch.tensor(augment)]
    if starts:
        out = policy(td, env, decode_type="multistart_greedy", num_starts=starts, calc_reward=True)
    else:
        out = policy(td, env, decode_type="greedy", calc_reward=True)
    return out["actions"].cpu().numpy(), (-out["reward"]).double().cpu().numpy()


class _Decoding:
    """One :func:`learned_starts` call: its clock from the start, the instance as an env input
    (made once; a unit that starts from a block of customers permutes it), the rollouts kept,
    the measured/predicted time ratio of the last unit, the rollouts decoded and the labels."""

    def __init__(self, instance: CLRPInstance, policy, env, clock: Callable[[], float]) -> None:
        self.instance, self.policy, self.env, self.clock = instance, policy, env, clock
        self.start = clock()
        self.td = instances_to_tensordict([instance])
        self.pool = RolloutPool(instance.num_depots, decode_plan.PARAMS.pool_size)
        self.ratio = 1.0  # safety x measured / predicted time of the last unit
        self.trajectories = 0
        self.labels: list[str] = []

    def elapsed(self) -> float:
        """Seconds since the decoding started."""
        return self.clock() - self.start

    def prior(self, unit: Unit) -> float:
        """The prior of ``unit``'s decode time (:func:`.decode_plan.predict_decode_seconds`)."""
        return predict_decode_seconds(self.instance.num_customers, self.instance.num_depots,
                                      unit.rows)  # fmt: skip

    def fits(self, unit: Unit, seconds: float) -> bool:
        """Whether ``unit``'s predicted time fits in what is left of ``seconds`` (logged when
        it does not)."""
        predicted = self.ratio * self.prior(unit)
        left = seconds - self.elapsed()
        if predicted > left:
            logger.debug("%s: decode unit of %d rollouts (%.2f s predicted) does not fit "
                         "(%.2f s left)", self.instance.name, unit.rows, predicted,
                         left)  # fmt: skip
            return False
        return True

    def run(self, unit: Unit) -> None:
        """Decode ``unit`` (on the instance with its customers reordered when the unit starts
        from a block of them), keep its best rollouts and rescale the predictions."""
        began = self.clock()
        reorders = 0 < unit.starts < self.instance.num_customers
        td = customers_in_order(self.td, unit.order) if reorders else self.td
        actions, costs = _rollouts(self.policy, self.env, td, unit.transforms, unit.starts)
        self.pool.add(actions, costs, unit.order if reorders else None)
        measured = self.clock() - began
        self.ratio = decode_plan.PARAMS.prediction_safety * measured / self.prior(unit)
        self.trajectories += unit.rows
        if unit.transforms is not None and len(unit.transforms) == 8:
            self.labels.append("x8")
        elif unit.starts == 0:
            self.labels.append("greedy")

    def label_multistart(self) -> None:
        """After the units: ``ms<k>`` for ``k`` start-customer rollouts beyond the greedy one
        (none after x8 or a lone greedy rollout)."""
        if self.trajectories not in (0, 1, 8 * self.instance.num_customers):
            self.labels.append(f"ms{self.trajectories - 1}")

    def add_sgbs(self, seconds: float, sgbs: bool | None) -> None:
        """After an x8 decode, one SGBS ``4x4+aug8`` rollout when it fits (see
        :func:`learned_starts`), stopped at the end of ``seconds`` less one x8 time."""
        x8_seconds = self.elapsed()
        params = decode_plan.PARAMS
        factor = params.sgbs_first_step_factor if sgbs else params.sgbs_factor
        if sgbs is False or self.labels[:1] != ["x8"]:
            return
        if factor * x8_seconds > seconds - self.elapsed():
            return
        from ..models import decode_batch

        # the last expansion may run past the stop by about an x8 decode's time
        end = self.start + seconds - x8_seconds
        actions, parts, _ = decode_batch(
            self.policy, self.env, self.td, "sgbs:4x4+aug8", stop=lambda: self.clock() >= end
        )
        self.pool.add(actions.cpu().numpy(), parts["total"].double().cpu().numpy(), None)
        self.trajectories += 1
        self.labels.append("sgbs")

    def result(self, count: int) -> LearnedStarts:
        """The ``count`` diverse starts among the valid rollouts kept."""
        rollouts = valid_solutions(self.instance, self.pool) if self.trajectories else []
        solutions = diverse_starts(self.instance, rollouts, count)
        return LearnedStarts(
            solutions=solutions,
            objectives=[s.cost(self.instance).total for s in solutions],
            decode="+".join(self.labels) if self.labels else "none",
            trajectories=self.trajectories,
            seconds=self.elapsed(),
            rollouts=rollouts,
        )


def learned_starts(
    instance: CLRPInstance,
    policy: torch.nn.Module,
    seconds: float,
    seed: int = 0,
    count: int = 3,
    sgbs: bool | None = None,
    env=None,
    on_unit=None,
    first_seconds: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> LearnedStarts:
    """Decode ``policy`` on ``instance`` within ``seconds`` and keep ``count`` diverse starts.

    Args:
        instance: the CLRP instance.
        policy: a CLRP policy (e.g. from :func:`clrp_rl4co.policies.load_policy`), in eval mode.
        seconds: the decode budget (wall time); units predicted not to fit are not run.
        seed: orders the start customers of large instances.
        count: how many solutions to keep (distinct open-depot sets first).
        sgbs: add an SGBS ``4x4+aug8`` solution after an x8 decode. None: when all of its
            predicted time (:attr:`.decode_plan.DecodeParams.sgbs_factor` x the x8 time) fits;
            True (SGBS asked for by name): anytime, whenever its first step fits
            (:attr:`.decode_plan.DecodeParams.sgbs_first_step_factor`), stopped at the deadline
            with its best so far; False: never.
        env: the env to decode in (default ``CLRPEnv(check_actions=False)``).
        on_unit: called with the decode label after each unit (progress).
        first_seconds: a larger budget for the first unit alone (on large instances one
            greedy rollout is worth more than the refinement time it takes).
        clock: the wall clock (seconds) the budget is measured on.

    Returns:
        The kept starts; none when not even one greedy rollout fits in ``seconds``.
    """
    from ..envs import CLRPEnv

    env = env if env is not None else CLRPEnv(check_actions=False)
    decoding = _Decoding(instance, policy, env, clock)
    first = max(seconds, first_seconds or 0.0)  # the first unit's budget
    for unit in plan_units(instance, seed, seconds):
        if not decoding.fits(unit, seconds if decoding.trajectories else first):
            break
        decoding.run(unit)
        if on_unit is not None:
            on_unit("decode")
    decoding.label_multistart()
    decoding.add_sgbs(seconds, sgbs)
    return decoding.result(count)
